# Reference values of the verdict's human estimands (Rscript make_reference.R; base R only).
# An independent implementation, from the vote table, of the estimators in
# audit/statistics/estimands.py (docs/audit.md, "What the judge is compared with"):
#   V     = mean over pairs of the pair's mean credit
#   tau^2 = S^2 - s_w^2 * mean(1 / n_i) over the pairs with >= 2 votes, clipped at 0, where
#           S^2 is the variance of their pair means and s_w^2 the pooled within-pair variance
#   M     = P(p > 1/2) for p ~ Beta(mean V, variance tau^2)  (pbeta)
# For the balanced cell tau^2 is also computed from aov()'s mean squares, (MSB - MSW) / n.
# The Holm adjustment is p.adjust(method = "holm").
votes <- read.csv("inputs/votes.csv", stringsAsFactors = FALSE)
out <- data.frame()
for (cell in unique(votes$cell)) {
  v <- votes[votes$cell == cell, ]
  means <- tapply(v$credit, v$pair_id, mean)
  counts <- tapply(v$credit, v$pair_id, length)
  V <- mean(means)
  multi <- names(counts)[counts >= 2]
  m <- means[multi]
  S2 <- var(m)
  ss <- sapply(multi, function(p) sum((v$credit[v$pair_id == p] - means[p])^2))
  sw2 <- sum(ss) / sum(counts[multi] - 1)
  tau2 <- max(S2 - sw2 * mean(1 / counts[multi]), 0)
  if (tau2 <= 0) {
    M <- if (V > 0.5) 1 else if (V < 0.5) 0 else 0.5
  } else if (tau2 >= V * (1 - V)) {
    M <- V
  } else {
    k <- V * (1 - V) / tau2 - 1
    M <- 1 - pbeta(0.5, V * k, (1 - V) * k)
  }
  tau2_aov <- NA
  if (length(unique(counts)) == 1) {
    fit <- summary(aov(credit ~ factor(pair_id), data = v))[[1]]
    msb <- fit[["Mean Sq"]][1]; msw <- fit[["Mean Sq"]][2]
    tau2_aov <- max((msb - msw) / counts[[1]], 0)
  }
  out <- rbind(out, data.frame(cell = cell, vote_share = V, share_var = S2, within_var = sw2,
                               between_pair_var = tau2, between_pair_var_aov = tau2_aov, majority_rate = M))
}
out[] <- lapply(out, function(x) if (is.numeric(x)) sprintf("%.17g", x) else x)
write.csv(out, "outputs/estimands.csv", row.names = FALSE, quote = FALSE)
p <- read.csv("inputs/p_values.csv")$p
write.csv(data.frame(p = sprintf("%.17g", p), holm = sprintf("%.17g", p.adjust(p, method = "holm")),
                     bonferroni = sprintf("%.17g", p.adjust(p, method = "bonferroni"))),
          "outputs/holm.csv", row.names = FALSE, quote = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
