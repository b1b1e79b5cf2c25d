# Reference ICCs from psych::ICC (classical ANOVA: lmer = FALSE). Run: Rscript make_reference.R
library(psych)
out <- data.frame()
for (f in sort(list.files(".", pattern = "^input_.*\\.csv$"))) {
  x <- read.csv(f)
  r <- ICC(x, lmer = FALSE, alpha = 0.05)$results
  name <- sub("^input_(.*)\\.csv$", "\\1", f)
  for (i in seq_len(nrow(r))) {
    for (q in c("ICC", "F", "df1", "df2", "p", "lower bound", "upper bound")) {
      out <- rbind(out, data.frame(dataset = name, type = r$type[i], quantity = q,
                                   value = sprintf("%.17g", r[[q]][i])))
    }
  }
}
write.csv(out, "reference.csv", row.names = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
