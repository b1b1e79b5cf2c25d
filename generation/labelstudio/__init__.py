"""Label Studio: the blind pairwise study, as files or on a server.

* :mod:`.config` -- the labelling config (Choices per criterion + overall, optional tie);
* :mod:`.tasks` -- blind tasks from pairs.csv + stories.csv (``audit labelstudio export``);
* :mod:`.annotations` -- a JSON export -> humans.csv (``audit labelstudio import``);
* :mod:`.server` -- push the study to a Label Studio server and pull the annotations back
  (``audit labelstudio push`` / ``pull``, through ``label-studio-sdk``).
"""

from judge_transfer_audit.generation.labelstudio.annotations import (
    HumansImport,
    import_export,
    parse_export,
    read_export,
)
from judge_transfer_audit.generation.labelstudio.config import COMMENT, OVERALL, labelling_config
from judge_transfer_audit.generation.labelstudio.tasks import TaskExport, build_tasks, export_tasks

__all__ = [
    "COMMENT",
    "OVERALL",
    "HumansImport",
    "TaskExport",
    "build_tasks",
    "export_tasks",
    "import_export",
    "labelling_config",
    "parse_export",
    "read_export",
]
