"""Which typed result each optional section of :class:`~audit.result.AuditResult` carries.

``AuditResult``'s section annotations (``dev: Section[DevValidity]``, ...) name these types;
:func:`audit.result.result_from_json` resolves them here (``AuditResult.__annotation_namespace__``)
to rebuild each section losslessly, so ``import audit.result`` does not import them (they pull
scipy). This module only imports the payload types (each defined in the leaf module of its
statistics), never the section modules (audit/sections/) that compute them, so the result model
depends on the statistics and nothing depends back on the result through it.
"""

from __future__ import annotations

from audit.agreement_decision import AgreementDecision
from audit.budget_result import LabelBudget
from audit.devset import DevValidity
from audit.judge_agreement import JudgeAgreement
from audit.judge_configurations_result import JudgeConfigurations
from audit.judge_position import JudgePosition
from audit.leaderboard import Leaderboard
from audit.prediction_powered.result import PredictionPowered
from audit.readers import ReaderAnalysis
from audit.surface import SurfaceResult
from audit.uncertainty.section import UncertaintySection

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
