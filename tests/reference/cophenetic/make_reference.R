# Reference for reader clustering (run: Rscript make_reference.R): base R hclust on Euclidean
# distances of scale()d profiles, each tree's cophenetic correlation cor(cophenetic(h), d),
# and the correlation between the two trees' cophenetic distances (what
# dendextend::cor_cophenetic computes, written with base R), for every linkage we offer
# that R's hclust names the same way.
out <- data.frame()
add <- function(name, q, v) out <<- rbind(out, data.frame(dataset = name, quantity = q, value = sprintf("%.17g", v)))
methods <- c(average = "average", complete = "complete", single = "single", weighted = "mcquitty")
for (name in c("seven", "nine")) {
  w <- as.matrix(read.csv(paste0("input_", name, "_weights.csv"), row.names = 1))
  k <- as.matrix(read.csv(paste0("input_", name, "_kappas.csv"), row.names = 1))
  dw <- dist(scale(w)); dk <- dist(scale(k))
  for (m in names(methods)) {
    hw <- hclust(dw, methods[[m]]); hk <- hclust(dk, methods[[m]])
    cw <- cophenetic(hw); ck <- cophenetic(hk)
    add(name, paste0(m, ":cophenetic_weights"), cor(cw, dw))
    add(name, paste0(m, ":cophenetic_kappas"), cor(ck, dk))
    add(name, paste0(m, ":cophenetic_between"), cor(cw, ck))
    hs <- sort(hw$height)
    for (i in seq_along(hs)) add(name, paste0(m, ":height_weights_", i), hs[i])
  }
}
write.csv(out, "reference.csv", row.names = FALSE)
writeLines(capture.output(sessionInfo()), "sessionInfo.txt")
