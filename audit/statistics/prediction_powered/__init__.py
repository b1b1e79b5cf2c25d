"""Prediction-powered inference (PPI++) of the humans' figures from the judge on every pair
plus human votes on a sample (docs/prediction-powered.md)."""

from judge_transfer_audit.statistics.prediction_powered.compute import corrected_estimates
from judge_transfer_audit.statistics.prediction_powered.estimators import LogisticPPI, MeanPPI, ppi_logistic, ppi_mean
from judge_transfer_audit.statistics.prediction_powered.result import PredictionPowered

__all__ = ["corrected_estimates", "ppi_mean", "ppi_logistic", "MeanPPI", "LogisticPPI", "PredictionPowered"]
