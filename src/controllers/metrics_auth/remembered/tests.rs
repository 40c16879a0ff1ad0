use std::time::Duration;

use super::*;

fn at(start: Instant, seconds: u64) -> Instant {
    start + Duration::from_secs(seconds)
}

#[test]
fn an_answer_lasts_until_its_own_expiry() {
    let now = Instant::now();
    let mut remembered = Remembered::new(4);
    remembered.insert("a".into(), 1, at(now, 60), now);
    remembered.insert("b".into(), 2, at(now, 10), now);
    assert_eq!(remembered.get("a", at(now, 59)), Some(1));
    assert_eq!(remembered.get("b", at(now, 9)), Some(2));
    assert_eq!(remembered.get("b", at(now, 10)), None);
    assert_eq!(remembered.get("a", at(now, 60)), None);
    assert_eq!(remembered.get("c", now), None);
}

#[test]
fn a_full_memory_forgets_only_the_answers_nearest_their_expiry() {
    let now = Instant::now();
    let mut remembered = Remembered::new(3);
    remembered.insert("scraper".into(), 0, at(now, 60), now);
    remembered.insert("random-1".into(), 1, at(now, 10), now);
    remembered.insert("random-2".into(), 2, at(now, 10), at(now, 1));
    remembered.insert("random-3".into(), 3, at(now, 11), at(now, 1));
    assert_eq!(remembered.len(), 3);
    assert_eq!(
        remembered.get("random-1", at(now, 1)),
        None,
        "the oldest refusal"
    );
    assert_eq!(remembered.get("scraper", at(now, 1)), Some(0));
    assert_eq!(remembered.get("random-2", at(now, 1)), Some(2));
    assert_eq!(remembered.get("random-3", at(now, 1)), Some(3));

    // A flood of new tokens never clears the memory, and never pushes the longer-lived answer
    // out while briefer ones are there.
    for i in 4..1000 {
        remembered.insert(format!("random-{i}"), i, at(now, 11), at(now, 2));
        assert_eq!(remembered.len(), 3);
        assert_eq!(remembered.get("scraper", at(now, 2)), Some(0));
    }
}

#[test]
fn expired_answers_go_before_a_live_one() {
    let now = Instant::now();
    let mut remembered = Remembered::new(3);
    remembered.insert("old".into(), 1, at(now, 10), now);
    remembered.insert("long".into(), 2, at(now, 60), now);
    remembered.insert("short".into(), 3, at(now, 30), now);
    remembered.insert("new".into(), 4, at(now, 70), at(now, 20));
    assert_eq!(remembered.len(), 3);
    assert_eq!(remembered.get("short", at(now, 20)), Some(3));
    assert_eq!(remembered.get("long", at(now, 20)), Some(2));
    assert_eq!(remembered.get("new", at(now, 20)), Some(4));
}

#[test]
fn an_answer_remembered_again_replaces_the_old_one() {
    let now = Instant::now();
    let mut remembered = Remembered::new(2);
    remembered.insert("a".into(), 1, at(now, 10), now);
    remembered.insert("a".into(), 2, at(now, 60), at(now, 5));
    remembered.insert("b".into(), 3, at(now, 60), at(now, 5));
    assert_eq!(remembered.len(), 2);
    assert_eq!(remembered.get("a", at(now, 30)), Some(2));
    assert_eq!(remembered.get("b", at(now, 30)), Some(3));
}
