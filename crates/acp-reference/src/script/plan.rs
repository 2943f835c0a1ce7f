//! The plan of a turn with `plan`: its steps plus a final "Report back" step, replaced whole
//! on every change.

use super::{Step, TurnInput};
use acp_session::neutral::{PlanStep, StepStatus, TurnEvent};

/// A plan of the turn's steps plus a final "Report back" step.
pub(super) struct Plan {
    id: String,
    steps: Vec<PlanStep>,
}

impl Plan {
    pub(super) fn new(input: &TurnInput, steps: &[Step]) -> Self {
        let steps = steps
            .iter()
            .map(|step| step.label())
            .chain(["Report back"])
            .map(|content| PlanStep::new(content, StepStatus::Pending))
            .collect();
        Self {
            id: format!("plan_{}", input.turn_number),
            steps,
        }
    }

    pub(super) fn set(&mut self, index: usize, status: StepStatus) -> TurnEvent {
        if let Some(step) = self.steps.get_mut(index) {
            step.status = status;
        }
        self.event()
    }

    pub(super) fn cancel_unfinished(&mut self) -> TurnEvent {
        for step in &mut self.steps {
            if step.status != StepStatus::Completed {
                step.status = StepStatus::Cancelled;
            }
        }
        self.event()
    }

    fn event(&self) -> TurnEvent {
        TurnEvent::PlanSteps {
            plan_id: self.id.clone(),
            steps: self.steps.clone(),
        }
    }
}
