# Pooled-over-matchups Cohen's kappa references for judge_transfer_audit.statistics.judge.agreement (chance within each
# matchup, de Vries et al. 2008): each matchup's (case's) kappa from psych::cohen.kappa, its
# chance agreement p_e from the matchup's own table, p_o = p_e + kappa (1 - p_e), then
# kappa = (sum n p_o - sum n p_e) / (sum n - sum n p_e). The majority as in make_reference.R.
# Run from this directory after make_inputs_pooled.py: Rscript make_reference_pooled.R
suppressPackageStartupMessages(library(psych))
options(digits = 17)
v <- read.csv("votes_pooled.csv", stringsAsFactors = FALSE)
j <- read.csv("judge_pooled.csv", stringsAsFactors = FALSE)
parts <- function(a, b) {
  lev <- sort(unique(c(a, b)))
  k <- cohen.kappa(cbind(factor(a, levels = lev), factor(b, levels = lev)))$kappa
  t <- table(factor(a, levels = 0:2), factor(b, levels = 0:2))
  n <- sum(t); pe <- sum(rowSums(t) * colSums(t)) / n^2
  c(n = n, po = pe + k * (1 - pe), pe = pe)
}
pooled <- function(p) {
  p <- p[p[, "n"] > 0 & p[, "pe"] < 1, , drop = FALSE]
  n <- p[, "n"]
  (sum(n * p[, "po"]) - sum(n * p[, "pe"])) / (sum(n) - sum(n * p[, "pe"]))
}
maj <- list(); rd <- list()
for (cs in sort(unique(v$case))) {
  vc <- v[v$case == cs, ]; jc <- j[j$case == cs, ]
  focal <- tapply(vc$category == 1, vc$unit, sum); other <- tapply(vc$category == 0, vc$unit, sum)
  mj <- ifelse(focal > other, 1, ifelse(other > focal, 0, NA))
  jm <- merge(data.frame(unit = names(mj), majority = as.vector(mj)), jc, by = "unit")
  jm <- jm[!is.na(jm$majority) & jm$judge >= 0, ]
  maj[[length(maj) + 1]] <- parts(jm$judge, jm$majority)
  for (r in sort(unique(vc$reader))) {
    m <- merge(vc[vc$reader == r, ], jc, by = c("case", "unit"))
    m <- m[m$judge >= 0, ]
    if (nrow(m) > 0) rd[[r]] <- rbind(rd[[r]], parts(m$judge, m$category))
  }
}
out <- data.frame(what = "majority", n = sum(sapply(maj, `[`, "n")), kappa = pooled(do.call(rbind, maj)))
for (r in names(rd)) out <- rbind(out, data.frame(what = r, n = sum(rd[[r]][, "n"]), kappa = pooled(rd[[r]])))
write.csv(out, "kappa_psych_pooled.csv", row.names = FALSE)
