"""Reliability of scalar ratings: ICC, Cronbach's alpha, Kendall's W, Krippendorff's alpha.

Each statistic lives in its own module and names the independent implementation it was
validated against; :func:`reliability_report` assembles them for ``audit reliability``.
"""
