"""The impossibility construction (learning under incomplete participation), under its public
name. A re-export of :mod:`flbounds.theory.impossibility`.
"""

from flbounds.theory.impossibility import (  # noqa: F401
    LEARNERS,
    TARGETS,
    FailurePlan,
    adversarial_selection,
    client_level_x2_probabilities,
    draw_plan,
    failure_indicators,
    impossibility_chernoff_bound,
    impossibility_event_probability,
    learner_predictions,
    true_risk,
    two_point_distribution,
)
