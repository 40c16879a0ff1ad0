//! Who may read `/metrics`, as Kueue's manager decides it (controller-runtime's
//! `WithAuthenticationAndAuthorization`): the caller's bearer token goes through a TokenReview,
//! then the user it names through a SubjectAccessReview for the non-resource path and the
//! request's verb (`get /metrics`, which Kueue's `metrics-reader` ClusterRole grants). No token
//! or a token the API server does not accept is `401 Unauthorized`; a user the review refuses is
//! `403`, with controller-runtime's messages. Answers are remembered for a while (an allowed one
//! for a minute, a refusal for less), so a scraper's period costs no review most of the time;
//! reviews are limited in number ([`review_limit`]), so a flood of unknown tokens is answered
//! `429` here instead of reaching the API server.
//!
//! The reviews are questions to the API server, not writes: nothing is stored, and every replica
//! answers for itself, leader or not, so they do not go through `controllers::writer`.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, header};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::time::Instant;

use crate::clock::Clock;

mod remembered;
mod review_limit;

use self::remembered::Remembered;
use self::review_limit::ReviewLimit;

/// How long one review may take.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);
/// How long answers are remembered (controller-runtime's delegating authenticator keeps a token
/// for a minute, its authorizer a refusal for 30 s).
const ALLOWED_FOR: Duration = Duration::from_secs(60);
const FORBIDDEN_FOR: Duration = Duration::from_secs(30);
const UNAUTHENTICATED_FOR: Duration = Duration::from_secs(10);
/// Remembered answers at most; past it the expired, then those nearest their expiry, are
/// forgotten.
const MAX_REMEMBERED: usize = 1024;

/// The answer to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Allowed,
    /// No usable token.
    Unauthenticated,
    /// The user the token names may not do this.
    Forbidden {
        user: String,
    },
}

impl Access {
    /// The HTTP refusal, or `None` when allowed.
    pub fn refusal(&self) -> Option<(StatusCode, String)> {
        match self {
            Access::Allowed => None,
            Access::Unauthenticated => Some((StatusCode::UNAUTHORIZED, "Unauthorized\n".into())),
            Access::Forbidden { user } => Some((
                StatusCode::FORBIDDEN,
                format!("Authorization denied for user {user}\n"),
            )),
        }
    }

    fn remembered_for(&self) -> Duration {
        match self {
            Access::Allowed => ALLOWED_FOR,
            Access::Unauthenticated => UNAUTHENTICATED_FOR,
            Access::Forbidden { .. } => FORBIDDEN_FOR,
        }
    }
}

/// Why no answer could be had.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("{review}: {source}")]
    Api {
        review: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("{review} took longer than {REVIEW_TIMEOUT:?}")]
    Timeout { review: &'static str },
    /// As many reviews are under way, or were started this second, as are allowed.
    #[error("too many callers to review at once")]
    Throttled,
}

/// The bearer token of a request, if it carries one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Asks the API server, and remembers its answers.
pub struct MetricsAuth {
    client: Client,
    remembered: Mutex<Remembered<Access>>,
    limit: ReviewLimit,
    clock: Clock,
}

/// What an answer is remembered under: the token itself is not kept, only a digest of it.
fn remembered_key(token: &str, verb: &str, path: &str) -> String {
    format!("{} {verb} {path}", sha1_smol::Sha1::from(token).digest())
}

impl MetricsAuth {
    pub fn new(client: Client, clock: Clock) -> Self {
        MetricsAuth {
            client,
            remembered: Mutex::new(Remembered::new(MAX_REMEMBERED)),
            limit: ReviewLimit::new(clock.instant()),
            clock,
        }
    }

    /// Whether the request with these headers may `verb` `path`.
    pub async fn check(
        &self,
        headers: &HeaderMap,
        verb: &str,
        path: &str,
    ) -> Result<Access, ReviewError> {
        let Some(token) = bearer_token(headers) else {
            return Ok(Access::Unauthenticated);
        };
        let key = remembered_key(token, verb, path);
        let now = self.clock.instant();
        if let Some(access) = self.recall(&key, now) {
            return Ok(access);
        }
        let Some(_place) = self.limit.try_start(now) else {
            return Err(ReviewError::Throttled);
        };
        let access = self.review(token, verb, path).await?;
        self.remember(key, now, access.clone());
        Ok(access)
    }

    fn recall(&self, key: &str, now: Instant) -> Option<Access> {
        let remembered = self
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        remembered.get(key, now)
    }

    fn remember(&self, key: String, now: Instant, access: Access) {
        let mut remembered = self
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let until = now + access.remembered_for();
        remembered.insert(key, access, until, now);
    }

    async fn review(&self, token: &str, verb: &str, path: &str) -> Result<Access, ReviewError> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_owned()),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let api: Api<TokenReview> = Api::all(self.client.clone());
        let reviewed = ask("TokenReview", api.create(&PostParams::default(), &review)).await?;
        let status = reviewed.status.unwrap_or_default();
        let Some(user) = status.user.filter(|_| status.authenticated == Some(true)) else {
            return Ok(Access::Unauthenticated);
        };
        let username = user.username.clone().unwrap_or_default();
        let question = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username,
                uid: user.uid,
                groups: user.groups,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some(verb.to_owned()),
                }),
                resource_attributes: None,
            },
            ..SubjectAccessReview::default()
        };
        let api: Api<SubjectAccessReview> = Api::all(self.client.clone());
        let answered = ask(
            "SubjectAccessReview",
            api.create(&PostParams::default(), &question),
        )
        .await?;
        if answered.status.is_some_and(|s| s.allowed) {
            Ok(Access::Allowed)
        } else {
            Ok(Access::Forbidden { user: username })
        }
    }
}

async fn ask<T>(
    review: &'static str,
    request: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, ReviewError> {
    match tokio::time::timeout(REVIEW_TIMEOUT, request).await {
        Ok(answer) => answer.map_err(|source| ReviewError::Api { review, source }),
        Err(_) => Err(ReviewError::Timeout { review }),
    }
}

#[cfg(test)]
mod tests;
