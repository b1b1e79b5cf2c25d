"""Which typed result each optional section of :class:`~judge_transfer_audit.results.result.AuditResult` carries.

``AuditResult``'s section annotations (``dev: Section[DevValidity]``, ...) name these types;
:func:`judge_transfer_audit.results.result.result_from_json` resolves them here
(``AuditResult.__annotation_namespace__``)
to rebuild each section losslessly, so ``import judge_transfer_audit.results.result`` does not import them (they pull
scipy). This module only imports the payload types (each defined in the leaf module of its
statistics), never the section modules (audit/sections/) that compute them, so the result model
depends on the statistics and nothing depends back on the result through it.
"""

from __future__ import annotations

from judge_transfer_audit.statistics.budget.result import LabelBudget
from judge_transfer_audit.statistics.devset import DevValidity
from judge_transfer_audit.statistics.judge.agreement import JudgeAgreement
from judge_transfer_audit.statistics.judge.position import JudgePosition
from judge_transfer_audit.statistics.leaderboard.fit import Leaderboard
from judge_transfer_audit.statistics.prediction_powered.result import PredictionPowered
from judge_transfer_audit.statistics.readers import ReaderAnalysis
from judge_transfer_audit.statistics.surface import SurfaceResult
from judge_transfer_audit.statistics.uncertainty.section import UncertaintySection
from judge_transfer_audit.verdict.agreement_decision import AgreementDecision
from judge_transfer_audit.verdict.judge_configurations_result import JudgeConfigurations

#: section field of AuditResult -> the type of its payload
SECTION_TYPES: dict[str, type] = {
    "dev": DevValidity,
    "uncertainty": UncertaintySection,
    "readers": ReaderAnalysis,
    "surface": SurfaceResult,
    "judge_agreement": JudgeAgreement,
    "judge_configurations": JudgeConfigurations,
    "leaderboard": Leaderboard,
    "judge_position": JudgePosition,
    "label_budget": LabelBudget,
    "prediction_powered": PredictionPowered,
    "agreement_decision": AgreementDecision,
}
