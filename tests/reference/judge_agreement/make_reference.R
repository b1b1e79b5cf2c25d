# Cohen's kappa references for judge_transfer_audit.statistics.judge.agreement: psych::cohen.kappa (unweighted).
# The reader majority is computed here, independently: ties (category 2) abstain, the side
# with more decisive votes wins, equal counts are a split (unit not scored); a unit without
# a judge verdict (-1) is not scored. Run from this directory: Rscript make_reference.R
suppressPackageStartupMessages(library(psych))
options(digits = 17)
v <- read.csv("votes.csv", stringsAsFactors = FALSE)
j <- read.csv("judge.csv", stringsAsFactors = FALSE)
kap <- function(a, b) {
  lev <- sort(unique(c(a, b)))
  cohen.kappa(cbind(factor(a, levels = lev), factor(b, levels = lev)))$kappa
}
out <- list()
for (cs in sort(unique(v$case))) {
  vc <- v[v$case == cs, ]; jc <- j[j$case == cs, ]
  focal <- tapply(vc$category == 1, vc$unit, sum); other <- tapply(vc$category == 0, vc$unit, sum)
  maj <- ifelse(focal > other, 1, ifelse(other > focal, 0, NA))
  jm <- merge(data.frame(unit = names(maj), majority = as.vector(maj)), jc, by = "unit")
  jm <- jm[!is.na(jm$majority) & jm$judge >= 0, ]
  out[[length(out) + 1]] <- data.frame(case = cs, what = "majority", n = nrow(jm), kappa = kap(jm$judge, jm$majority))
  for (r in sort(unique(vc$reader))) {
    m <- merge(vc[vc$reader == r, ], jc, by = c("case", "unit"))
    m <- m[m$judge >= 0, ]
    out[[length(out) + 1]] <- data.frame(case = cs, what = r, n = nrow(m), kappa = kap(m$judge, m$category))
  }
}
write.csv(do.call(rbind, out), "kappa_psych.csv", row.names = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
