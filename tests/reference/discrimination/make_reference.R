# Reference values for `audit consistency`'s discrimination analysis (run: Rscript make_reference.R).
# oneway.test (Welch, var.equal = FALSE; classical, var.equal = TRUE), pairwise Welch t-tests
# (t.test per pair, and pairwise.t.test(pool.sd = FALSE, p.adjust.method = "bonferroni")),
# Cohen's d from psych::cohen.d (psych pools the sum of squares over N, Cohen over N - 2:
# the test rescales by sqrt((N - 2) / N)).
library(psych)
out <- data.frame()
add <- function(name, q, v) out <<- rbind(out, data.frame(dataset = name, quantity = q, value = sprintf("%.17g", v)))
for (f in sort(list.files(".", pattern = "^input_.*\\.csv$"))) {
  d <- read.csv(f)
  d$category <- factor(d$category, levels = sort(unique(d$category)))
  name <- sub("^input_(.*)\\.csv$", "\\1", f)
  w <- oneway.test(score ~ category, d, var.equal = FALSE)
  a <- oneway.test(score ~ category, d, var.equal = TRUE)
  add(name, "welch_f", w$statistic); add(name, "welch_df2", w$parameter[2]); add(name, "welch_p", w$p.value)
  add(name, "anova_f", a$statistic); add(name, "anova_p", a$p.value)
  pw <- pairwise.t.test(d$score, d$category, pool.sd = FALSE, p.adjust.method = "bonferroni")
  levs <- levels(d$category)
  for (i in 1:(length(levs) - 1)) for (j in (i + 1):length(levs)) {
    x <- d$score[d$category == levs[i]]; y <- d$score[d$category == levs[j]]
    key <- paste0(levs[i], "|", levs[j])
    tt <- t.test(x, y, var.equal = FALSE)
    add(name, paste0("welch_t:", key), tt$statistic)
    add(name, paste0("p:", key), tt$p.value)
    add(name, paste0("p_bonferroni:", key), pw$p.value[levs[j], levs[i]])
    sub <- d[d$category %in% c(levs[i], levs[j]), ]
    sub$g <- as.numeric(sub$category == levs[j])
    cd <- psych::cohen.d(sub[, c("score", "g")], "g")
    add(name, paste0("cohens_d:", key), -cd$cohen.d["score", "effect"])  # psych: mean(g=1) - mean(g=0)
  }
}
write.csv(out, "reference.csv", row.names = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
