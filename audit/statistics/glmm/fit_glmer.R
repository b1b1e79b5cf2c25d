# Fit one logistic GLMM with lme4::glmer (Laplace, nAGQ = 1, default glmerControl) and write
# every quantity judge-audit compares against as full-precision JSON.
#
# Usage: Rscript fit_glmer.R <input.csv> <output.json> "<formula>" <profile: 0|1> [tolPwrss]
#
# tolPwrss (default lme4's 1e-7) is PIRLS's convergence tolerance. At the default, glmer's
# Laplace deviance is only accurate to ~1e-3 (the conditional modes are not fully converged), so
# its optimum, logLik and finite-difference vcov carry that error; 1e-10 makes them accurate.
#
# Character columns of the input are grouping factors. Timings are measured inside R and so
# exclude R's start-up and package loading.
suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = TRUE)
input <- args[[1]]
output <- args[[2]]
form <- as.formula(args[[3]])
do_profile <- length(args) >= 4 && args[[4]] == "1"
tol_pwrss <- if (length(args) >= 5) as.numeric(args[[5]]) else 1e-7
ctrl <- glmerControl(tolPwrss = tol_pwrss)

d <- read.csv(input, stringsAsFactors = TRUE)
out <- list(
  input = basename(input), formula = args[[3]], n_obs = nrow(d),
  tolPwrss = tol_pwrss, R_version = R.version.string, lme4_version = as.character(packageVersion("lme4"))
)
warns <- character(0)
msgs <- character(0)
catcher <- function(expr) withCallingHandlers(expr,
  warning = function(w) { warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") },
  message = function(m) { msgs <<- c(msgs, conditionMessage(m)); invokeRestart("muffleMessage") })

t0 <- proc.time()[["elapsed"]]
m <- tryCatch(catcher(glmer(form, data = d, family = binomial, control = ctrl)), error = function(e) e)
out$time_fit <- proc.time()[["elapsed"]] - t0
if (inherits(m, "error")) {
  out$error <- conditionMessage(m)
} else {
  V <- as.matrix(vcov(m))
  out$names <- names(fixef(m))
  out$fixef <- unname(fixef(m))
  out$se <- unname(sqrt(diag(V)))
  out$vcov <- unname(lapply(seq_len(nrow(V)), function(i) unname(V[i, ])))
  out$theta <- as.list(getME(m, "theta"))
  vc <- as.data.frame(VarCorr(m))
  out$sd <- as.list(setNames(vc$sdcor, vc$grp))
  out$loglik <- as.numeric(logLik(m))
  out$aic <- AIC(m)
  out$is_singular <- isSingular(m)
  out$conv_messages <- as.list(m@optinfo$conv$lme4$messages)
  re <- ranef(m)
  out$ranef <- lapply(re, function(x) as.list(setNames(x[[1]], rownames(x))))
  if (do_profile) {
    t1 <- proc.time()[["elapsed"]]
    ci <- tryCatch(catcher(confint(m, parm = "beta_", method = "profile")), error = function(e) e)
    out$time_profile <- proc.time()[["elapsed"]] - t1
    out$profile_devtol <- 1e-9
    if (inherits(ci, "error") && grepl("lower deviance", conditionMessage(ci))) {
      # The optimum of the default fit is only reached to about 1e-6 in deviance (Nelder-Mead
      # second stage), so profiling finds "lower" deviances than profile()'s default devtol of
      # 1e-9 tolerates. Profile again tolerating 1e-4 (still far below what moves an interval).
      out$profile_first_error <- conditionMessage(ci)
      out$profile_devtol <- 1e-4
      ci <- tryCatch(catcher(confint(m, parm = "beta_", method = "profile", devtol = 1e-4)),
                     error = function(e) e)
      out$time_profile <- proc.time()[["elapsed"]] - t1
    }
    if (inherits(ci, "error")) {
      out$profile_error <- conditionMessage(ci)
    } else {
      out$profile_low <- unname(ci[, 1])
      out$profile_high <- unname(ci[, 2])
    }
  }
}
out$warnings <- as.list(unique(warns))
out$messages <- as.list(unique(msgs))
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, null = "null", na = "string", pretty = TRUE), output)
