# Reference Kendall's W from base R friedman.test: judges are blocks, objects are groups;
# W = chi2 / (m (n - 1)) (tie-corrected on both sides). Run: Rscript make_reference.R
out <- data.frame()
add <- function(name, q, v) out <<- rbind(out, data.frame(dataset = name, quantity = q, value = sprintf("%.17g", v)))
for (f in sort(list.files(".", pattern = "^input_.*\\.csv$"))) {
  x <- as.matrix(read.csv(f))          # rows = objects, columns = judges
  name <- sub("^input_(.*)\\.csv$", "\\1", f)
  ft <- friedman.test(t(x))            # rows of t(x) = blocks (judges), columns = groups (objects)
  m <- ncol(x); n <- nrow(x)
  add(name, "chi2", unname(ft$statistic))
  add(name, "df", unname(ft$parameter))
  add(name, "p", ft$p.value)
  add(name, "w", unname(ft$statistic) / (m * (n - 1)))
}
write.csv(out, "reference.csv", row.names = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
