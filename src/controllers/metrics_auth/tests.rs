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
    let auth = MetricsAuth::new(Client::try_from(config).expect("a client"));
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
