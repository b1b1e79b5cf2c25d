"""judge-audit: does an automatic judge transfer to the data it is about to judge?"""

__version__ = "0.1.0"
