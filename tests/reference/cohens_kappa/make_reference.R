# Reference values for judge_transfer_audit.statistics.readers.weights.cohens_kappa: unweighted Cohen's kappa from
# psych::cohen.kappa. Run from this directory: Rscript make_reference.R
suppressPackageStartupMessages(library(psych))
options(digits = 17)
d <- read.csv("labels.csv", stringsAsFactors = FALSE)
out <- do.call(rbind, lapply(split(d, d$case), function(s) {
  lev <- sort(unique(c(s$criterion, s$overall)))
  x <- cbind(factor(s$criterion, levels = lev), factor(s$overall, levels = lev))
  k <- cohen.kappa(x)
  data.frame(case = s$case[1], n = nrow(s), kappa = k$kappa)
}))
write.csv(out, "kappa_psych.csv", row.names = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
