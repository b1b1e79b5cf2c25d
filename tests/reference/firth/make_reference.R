# Reference values for audit/statistics/readers/firth.py (Firth penalised logistic regression).
# Run from this directory:  Rscript make_reference.R
# brglm2::brglmFit with type = "AS_mean" is Firth's (1993) bias reduction, which for the
# logit link equals maximisation of the Jeffreys-penalised likelihood (as logistf does).
suppressPackageStartupMessages(library(brglm2))
options(digits = 17)

# 1. Heinze & Schemper (2002) endometrial data, shipped with brglm2 (NV separates).
data("endometrial", package = "brglm2")
write.csv(endometrial, "endometrial.csv", row.names = FALSE)
fit <- glm(HG ~ NV + PI + EH, family = binomial("logit"), data = endometrial,
           method = "brglmFit", type = "AS_mean")
s <- summary(fit)$coefficients
out <- data.frame(term = rownames(s), estimate = s[, 1], std_error = s[, 2])
write.csv(out, "endometrial_firth.csv", row.names = FALSE)

# 2. A reader frame (+1/-1/0 coded criterion votes) in which one criterion separates.
reader <- read.csv("reader_separated.csv")
fit2 <- glm(overall ~ c1 + c2 + c3, family = binomial("logit"), data = reader,
            method = "brglmFit", type = "AS_mean")
s2 <- summary(fit2)$coefficients
write.csv(data.frame(term = rownames(s2), estimate = s2[, 1], std_error = s2[, 2]),
          "reader_separated_firth.csv", row.names = FALSE)

# 3. The same reader frame without separation: ML (plain glm) and Firth.
reader2 <- read.csv("reader_overlap.csv")
fit3 <- glm(overall ~ c1 + c2 + c3, family = binomial("logit"), data = reader2)
s3 <- summary(fit3)$coefficients
write.csv(data.frame(term = rownames(s3), estimate = s3[, 1], std_error = s3[, 2]),
          "reader_overlap_ml.csv", row.names = FALSE)
fit4 <- glm(overall ~ c1 + c2 + c3, family = binomial("logit"), data = reader2,
            method = "brglmFit", type = "AS_mean")
s4 <- summary(fit4)$coefficients
write.csv(data.frame(term = rownames(s4), estimate = s4[, 1], std_error = s4[, 2]),
          "reader_overlap_firth.csv", row.names = FALSE)

writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
