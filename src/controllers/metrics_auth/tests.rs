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

/// A flood of unknown tokens: as many reviews as the burst allows are asked (the server the
/// client points at does not exist, so each fails), the rest are refused here without one, while
/// a caller whose answer is remembered is still answered; a second later the rate allows more.
#[tokio::test]
async fn a_flood_of_unknown_tokens_asks_a_bounded_number_of_reviews() {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let clock = Clock::manual("2026-11-23T10:00:00Z".parse().expect("a time"));
    let auth = MetricsAuth::new(Client::try_from(config).expect("a client"), clock.clone());
    let scraper = remembered_key("scraper-token", "get", "/metrics");
    auth.remember(scraper, clock.instant(), Access::Allowed);

    let mut asked = 0;
    let mut throttled = 0;
    for i in 0..200 {
        match auth
            .check(&headers(&format!("Bearer random-{i}")), "get", "/metrics")
            .await
        {
            Err(ReviewError::Api { .. }) => asked += 1,
            Err(ReviewError::Throttled) => throttled += 1,
            other => panic!("unexpected answer {other:?}"),
        }
    }
    assert_eq!(asked, review_limit::BURST as usize);
    assert_eq!(throttled, 200 - asked);
    let scraper = auth
        .check(&headers("Bearer scraper-token"), "get", "/metrics")
        .await;
    assert_eq!(scraper.ok(), Some(Access::Allowed));

    clock.advance(Duration::from_secs(1));
    let answer = auth
        .check(&headers("Bearer one-more"), "get", "/metrics")
        .await;
    assert!(matches!(answer, Err(ReviewError::Api { .. })), "{answer:?}");
}

/// Reviews that hang hold their places: one more caller is refused at once.
#[tokio::test]
async fn reviews_in_flight_are_bounded() {
    // Accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("its address");
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let config = kube::Config::new(format!("http://{addr}").parse().expect("a URL"));
    let auth = std::sync::Arc::new(MetricsAuth::new(
        Client::try_from(config).expect("a client"),
        Clock::system(),
    ));
    let mut hanging = Vec::new();
    for i in 0..review_limit::MAX_IN_FLIGHT {
        let auth = auth.clone();
        hanging.push(tokio::spawn(async move {
            auth.check(&headers(&format!("Bearer slow-{i}")), "get", "/metrics")
                .await
        }));
    }
    // Each has taken its place once it is waiting for the server.
    while auth.limit.in_flight_now() < review_limit::MAX_IN_FLIGHT {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let answer = auth
        .check(&headers("Bearer one-more"), "get", "/metrics")
        .await;
    assert!(matches!(answer, Err(ReviewError::Throttled)), "{answer:?}");
    for task in hanging {
        task.abort();
    }
    silent.abort();
}
