# lme4 references for judge_transfer_audit.statistics.leaderboard.fit: the Bradley-Terry GLMM
#   glmer(y ~ 0 + x_s1 + ... + (1 | pair) + (1 | reader), family = binomial)
# with x = +1 for the focal system, -1 for the other, s0 the reference; ties left out.
# tolPwrss = 1e-10 (see tests/reference/glmm/README.md: the default PIRLS tolerance leaves
# ~1e-3 of error in the optimum). Run from this directory: Rscript make_reference.R
suppressPackageStartupMessages({library(lme4); library(jsonlite)})
out <- list()
for (case in c("six", "ties_unbalanced")) {
  d <- read.csv(paste0(case, ".csv"), stringsAsFactors = FALSE)
  d <- d[!is.na(d$y), ]
  systems <- sort(unique(c(d$focal, d$other)))
  X <- matrix(0, nrow(d), length(systems), dimnames = list(NULL, systems))
  X[cbind(seq_len(nrow(d)), match(d$focal, systems))] <- 1
  X[cbind(seq_len(nrow(d)), match(d$other, systems))] <- -1
  X <- X[, -1, drop = FALSE]
  df <- data.frame(y = d$y, pair = d$pair_id, reader = d$reader_id, X)
  form <- as.formula(paste("y ~ 0 +", paste(colnames(X), collapse = " + "), "+ (1 | pair) + (1 | reader)"))
  fit <- glmer(form, data = df, family = binomial, control = glmerControl(tolPwrss = 1e-10))
  vc <- as.data.frame(VarCorr(fit))
  out[[case]] <- list(systems = systems, b = unname(fixef(fit)), se = unname(sqrt(diag(as.matrix(vcov(fit))))),
                      vcov = unname(as.matrix(vcov(fit))), sd_pair = vc$sdcor[vc$grp == "pair"],
                      sd_reader = vc$sdcor[vc$grp == "reader"], loglik = as.numeric(logLik(fit)), n = nrow(df))
}
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE), "lme4_bt.json")
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
