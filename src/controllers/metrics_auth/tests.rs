use axum::http::HeaderValue;

use super::*;

fn headers(authorization: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::AUTHORIZATION,
        HeaderValue::from_str(authorization).expect("a header value"),
    );
    headers
}

#[test]
fn only_a_bearer_token_is_read() {
    assert_eq!(bearer_token(&headers("Bearer abc.def")), Some("abc.def"));
    assert_eq!(bearer_token(&headers("bearer abc")), Some("abc"));
    assert_eq!(bearer_token(&headers("Basic dXNlcjpwdw==")), None);
    assert_eq!(bearer_token(&headers("Bearer ")), None);
    assert_eq!(bearer_token(&HeaderMap::new()), None);
}

#[test]
fn refusals_are_controller_runtimes() {
    assert_eq!(Access::Allowed.refusal(), None);
    assert_eq!(
        Access::Unauthenticated.refusal(),
        Some((StatusCode::UNAUTHORIZED, "Unauthorized\n".to_string()))
    );
    assert_eq!(
        Access::Forbidden {
            user: "system:serviceaccount:team:scraper".into()
        }
        .refusal(),
        Some((
            StatusCode::FORBIDDEN,
            "Authorization denied for user system:serviceaccount:team:scraper\n".to_string()
        ))
    );
}

#[tokio::test]
async fn answers_are_remembered_for_their_time_only() {
    // Never contacted: every answer here comes from memory.
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let auth = MetricsAuth::new(Client::try_from(config).expect("a client"), Clock::system());
    let now = Instant::now();
    auth.remember("allowed".into(), now, Access::Allowed);
    let forbidden = Access::Forbidden { user: "u".into() };
    auth.remember("forbidden".into(), now, forbidden.clone());
    let later = |seconds| now + Duration::from_secs(seconds);
    assert_eq!(auth.recall("allowed", later(59)), Some(Access::Allowed));
    assert_eq!(auth.recall("allowed", later(61)), None);
    assert_eq!(auth.recall("forbidden", later(29)), Some(forbidden));
    assert_eq!(auth.recall("forbidden", later(31)), None);
    assert_eq!(auth.recall("unknown", now), None);
}

/// The remembered answer lasts by the clock the checker is handed: within the minute no review
/// is asked (the server the client points at does not exist), past it one is.
#[tokio::test]
async fn a_remembered_answer_expires_on_the_checkers_clock() {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let clock = Clock::manual("2026-11-23T10:00:00Z".parse().expect("a time"));
    let auth = MetricsAuth::new(Client::try_from(config).expect("a client"), clock.clone());
    let key = remembered_key("scraper-token", "get", "/metrics");
    auth.remember(key, clock.instant(), Access::Allowed);
    let request = headers("Bearer scraper-token");
    clock.advance(Duration::from_secs(59));
    let answer = auth.check(&request, "get", "/metrics").await;
    assert_eq!(answer.ok(), Some(Access::Allowed));
    clock.advance(Duration::from_secs(2));
    let answer = auth.check(&request, "get", "/metrics").await;
    assert!(
        matches!(
            answer,
            Err(ReviewError::Api {
                review: "TokenReview",
                ..
            })
        ),
        "{answer:?}"
    );
}
