# Reference Cronbach's alpha from psych::alpha (use = "pairwise", Feldt bounds from psych's
# alpha.ci as stored in $feldt). Run: Rscript make_reference.R
library(psych)
out <- data.frame()
add <- function(name, q, v) out <<- rbind(out, data.frame(dataset = name, quantity = q, value = sprintf("%.17g", v)))
for (f in sort(list.files(".", pattern = "^input_.*\\.csv$"))) {
  x <- read.csv(f)
  name <- sub("^input_(.*)\\.csv$", "\\1", f)
  a <- suppressWarnings(alpha(x, check.keys = FALSE, warnings = FALSE))
  add(name, "raw_alpha", a$total$raw_alpha)
  add(name, "std_alpha", a$total$std.alpha)
  add(name, "feldt_lower", a$feldt$lower.ci)
  add(name, "feldt_upper", a$feldt$upper.ci)
  for (v in rownames(a$alpha.drop)) add(name, paste0("drop_", v), a$alpha.drop[v, "raw_alpha"])
}
write.csv(out, "reference.csv", row.names = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
