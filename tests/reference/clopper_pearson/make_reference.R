# Exact (Clopper-Pearson) binomial intervals from R's binom.test, for judge_transfer_audit.statistics.judge.position.
# Run from this directory: Rscript make_reference.R
options(digits = 17)
cases <- data.frame(k = c(0, 1, 7, 50, 61, 120, 299, 300), n = c(10, 10, 20, 100, 100, 240, 300, 300),
                    level = c(0.95, 0.95, 0.9, 0.95, 0.99, 0.95, 0.95, 0.95))
ci <- t(mapply(function(k, n, l) binom.test(k, n, conf.level = l)$conf.int, cases$k, cases$n, cases$level))
cases$low <- ci[, 1]; cases$high <- ci[, 2]
write.csv(cases, "binom_test.csv", row.names = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
