"""Reference behaviour for the DSH goal state (``dshkit.reference.goal``): the strict
``goal/change`` decoder, the replay fold with round admission, and the goal service."""

from .decode import (
    GOAL_CHANGE_VERSION,
    PHASES,
    SNAPSHOT_OPERATIONS,
    Clear,
    GoalChange,
    Snapshot,
    decode_goal_change,
    encode_goal_change,
)
from .errors import GoalError
from .fold import GoalState, apply_change, apply_event, fold_goal, goal_source
from .service import DEFAULT_MAX_GOAL_ROUNDS, GoalService

__all__ = ["DEFAULT_MAX_GOAL_ROUNDS", "GOAL_CHANGE_VERSION", "PHASES", "SNAPSHOT_OPERATIONS",
           "Clear", "GoalChange", "GoalError", "GoalService", "GoalState", "Snapshot",
           "apply_change", "apply_event", "decode_goal_change", "encode_goal_change",
           "fold_goal", "goal_source"]
