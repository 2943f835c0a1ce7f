//! The agent's authentication gate: one `agent` login method, optional unless required.

use std::sync::atomic::{AtomicBool, Ordering};

/// The id of the one advertised auth method (type `agent`: the agent handles it in `auth/login`).
pub const LOGIN_METHOD_ID: &str = "agent-login";

/// Why an auth call or a gated call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// A session method was called before `auth/login` while authentication is required.
    #[error("Authentication required: call `auth/login` with methodId `{LOGIN_METHOD_ID}` first")]
    Required,
    /// `auth/login` named a method that was not advertised.
    #[error("unknown auth method `{0}`; the advertised method is `{LOGIN_METHOD_ID}`")]
    UnknownMethod(String),
}

/// Login state for one agent process.
#[derive(Debug, Default)]
pub struct AuthGate {
    required: bool,
    logged_in: AtomicBool,
}

impl AuthGate {
    /// A gate; with `required`, session methods are refused until [`AuthGate::login`].
    pub fn new(required: bool) -> Self {
        Self {
            required,
            logged_in: AtomicBool::new(false),
        }
    }

    /// `Ok` when session methods may run now.
    pub fn check(&self) -> Result<(), AuthError> {
        if self.required && !self.is_logged_in() {
            return Err(AuthError::Required);
        }
        Ok(())
    }

    /// `auth/login` with `method_id`.
    pub fn login(&self, method_id: &str) -> Result<(), AuthError> {
        if method_id != LOGIN_METHOD_ID {
            return Err(AuthError::UnknownMethod(method_id.to_owned()));
        }
        self.logged_in.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// `auth/logout`: session methods are gated again (when authentication is required).
    pub fn logout(&self) {
        self.logged_in.store(false, Ordering::SeqCst);
    }

    /// `true` after a login not followed by a logout.
    pub fn is_logged_in(&self) -> bool {
        self.logged_in.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_auth_gates_until_login_and_again_after_logout() {
        let gate = AuthGate::new(true);
        assert_eq!(gate.check(), Err(AuthError::Required));
        assert!(matches!(
            gate.login("other"),
            Err(AuthError::UnknownMethod(_))
        ));
        gate.login(LOGIN_METHOD_ID).expect("advertised method");
        assert_eq!(gate.check(), Ok(()));
        gate.logout();
        assert_eq!(gate.check(), Err(AuthError::Required));
        assert_eq!(AuthGate::new(false).check(), Ok(()));
    }
}
