use super::*;

fn post(body: &'static str, length: Option<usize>) -> Request<Body> {
    let mut builder = Request::post("/validate");
    if let Some(length) = length {
        builder = builder.header(header::CONTENT_LENGTH, length);
    }
    builder.body(Body::from(body)).unwrap()
}

#[tokio::test]
async fn a_body_is_read_and_charged_to_the_budget_until_answered() {
    let intake = Intake::new(100, 50);
    let (body, permit) = intake.read(post("hello", Some(5))).await.unwrap();
    assert_eq!(&body[..], b"hello");
    assert_eq!(intake.room(), 95);
    drop(permit);
    assert_eq!(intake.room(), 100);
}

#[tokio::test]
async fn a_declared_size_past_the_limit_is_refused_unread() {
    let intake = Intake::new(100, 50);
    assert_eq!(
        intake.read(post("tiny", Some(51))).await.err(),
        Some(Refusal::TooLarge { declared: 51 })
    );
    assert_eq!(intake.room(), 100);
}

#[tokio::test]
async fn a_body_longer_than_the_limit_is_not_read_past_it() {
    let intake = Intake::new(100, 4);
    let refused = intake.read(post("longer than four", None)).await.err();
    assert!(
        matches!(refused, Some(Refusal::Unreadable(_))),
        "{refused:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_budget_turns_calls_away_after_a_short_wait() {
    let intake = Intake::new(10, 10);
    let (_, held) = intake.read(post("0123456789", Some(10))).await.unwrap();
    assert_eq!(
        intake.read(post("x", Some(1))).await.err(),
        Some(Refusal::Busy)
    );
    drop(held);
    assert!(intake.read(post("x", Some(1))).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_body_that_never_arrives_frees_its_share() {
    let intake = Intake::new(100, 50);
    let (_sender, body) = futures::channel::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
    let stalled = Request::post("/validate")
        .header(header::CONTENT_LENGTH, 20)
        .body(Body::from_stream(body))
        .unwrap();
    assert_eq!(intake.read(stalled).await.err(), Some(Refusal::SlowBody));
    assert_eq!(intake.room(), 100);
}

#[tokio::test(start_paused = true)]
async fn a_small_call_is_not_held_behind_a_large_one_waiting_for_room() {
    let intake = Intake::new(10, 8);
    let (_, held) = intake.read(post("012345", Some(6))).await.unwrap();
    // A large call waits for 8 of the 4 free bytes.
    let waiting = {
        let intake = intake.clone();
        tokio::spawn(async move { intake.read(post("01234567", Some(8))).await.map(|_| ()) })
    };
    tokio::task::yield_now().await;
    let small = tokio::time::timeout(
        std::time::Duration::from_millis(1),
        intake.read(post("x", Some(1))),
    )
    .await;
    assert!(
        matches!(small, Ok(Ok(_))),
        "a 1-byte call with 4 bytes free answered at once, not behind the 8-byte one"
    );
    drop(held);
    assert_eq!(
        waiting.await.unwrap(),
        Ok(()),
        "the large call takes its room once a share is given back"
    );
}
