//! Publishes `events.k8s.io/v1` Events. An event that repeats one published within
//! [`SERIES_WINDOW`] (same object, type, reason and note) is counted on that Event's `series`
//! with one patch instead of being created again, as client-go's recorders do.
//!
//! Only the last [`CAPACITY`] events are remembered for that, and only what a repeat needs (the
//! Event's name and count): in a burst of thousands of Workloads nearly every event is unique,
//! and keeping each whole for the window would grow memory with the burst, as would scanning
//! them all on each publish.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use tokio::time::Instant;

use crate::api::ObjectKey;
use crate::clock::Clock;

/// How long a published event is counted as the same one when it repeats (client-go's).
pub(super) const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);
/// How many published events are remembered for repeats.
pub(super) const CAPACITY: usize = 4096;

/// The object an event is about, as two events about the same one are told apart.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Regarding {
    Uid(String),
    /// An object whose reference carries no UID.
    Object(ObjectKey),
}

/// What makes two events the same one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct EventKey {
    regarding: Regarding,
    warning: bool,
    reason: String,
    note: String,
}

impl EventKey {
    pub(super) fn new(
        regarding: &ObjectReference,
        warning: bool,
        reason: &str,
        note: &str,
    ) -> Self {
        let regarding = match &regarding.uid {
            Some(uid) => Regarding::Uid(uid.clone()),
            None => Regarding::Object(ObjectKey::new(
                regarding.namespace.as_deref().unwrap_or_default(),
                regarding.name.as_deref().unwrap_or_default(),
            )),
        };
        EventKey {
            regarding,
            warning,
            reason: reason.to_owned(),
            note: note.to_owned(),
        }
    }
}

/// A published event, as far as a repeat needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Published {
    pub name: String,
    /// How many times it happened.
    pub count: i32,
    /// When it last happened.
    pub at: Instant,
}

/// The last [`CAPACITY`] published events. Each key is held once, shared by the map and the
/// order: its note and object make up most of what is remembered.
#[derive(Debug, Default)]
pub(super) struct Remembered {
    by_key: HashMap<Arc<EventKey>, (u64, Published)>,
    /// Keys in the order they were last published, each with that publication's number; an
    /// entry whose number is no longer the key's is stale and skipped.
    order: VecDeque<(u64, Arc<EventKey>)>,
    next: u64,
}

impl Remembered {
    /// The event `key` repeats, if it was published within the window before `now`.
    pub(super) fn repeat_of(&self, key: &EventKey, now: Instant) -> Option<&Published> {
        self.by_key
            .get(key)
            .map(|(_, published)| published)
            .filter(|published| now.saturating_duration_since(published.at) < SERIES_WINDOW)
    }

    /// Remembers `published` under `key`, forgetting the oldest beyond [`CAPACITY`].
    pub(super) fn remember(&mut self, key: EventKey, published: Published) {
        self.next += 1;
        let key = match self.by_key.get_key_value(&key) {
            Some((held, _)) => held.clone(),
            None => Arc::new(key),
        };
        self.order.push_back((self.next, key.clone()));
        self.by_key.insert(key, (self.next, published));
        while self.by_key.len() > CAPACITY || self.order.len() > 2 * CAPACITY {
            let Some((number, key)) = self.order.pop_front() else {
                break;
            };
            if self.by_key.get(&*key).is_some_and(|(n, _)| *n == number) {
                self.by_key.remove(&*key);
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_key.len()
    }
}

/// Publishes events as one reporting controller and instance.
pub(super) struct Recorder {
    client: Client,
    controller: String,
    instance: String,
    remembered: Remembered,
    clock: Clock,
}

/// What publishing one event sends.
#[derive(Debug, PartialEq)]
enum Publication {
    /// A repeat: the Event `published.name` gets the patch that counts it.
    Count {
        published: Published,
        patch: serde_json::Value,
    },
    /// A new Event.
    Create {
        published: Published,
        event: Box<Event>,
    },
}

impl Recorder {
    pub(super) fn new(
        client: Client,
        controller: &str,
        instance: Option<String>,
        clock: Clock,
    ) -> Self {
        Recorder {
            client,
            controller: controller.to_owned(),
            instance: instance.unwrap_or_else(|| controller.to_owned()),
            remembered: Remembered::default(),
            clock,
        }
    }

    /// Creates the event (a Warning or a Normal one, `reason`, `note`) about `regarding`, or
    /// counts it on the Event it repeats.
    pub(super) async fn publish(
        &mut self,
        regarding: &ObjectReference,
        warning: bool,
        reason: &str,
        note: &str,
    ) -> Result<(), kube::Error> {
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let events: Api<Event> = Api::namespaced(self.client.clone(), namespace);
        let key = EventKey::new(regarding, warning, reason, note);
        let published = match self.prepare(&key, regarding, warning, reason, note) {
            Publication::Count { published, patch } => {
                events
                    .patch(
                        &published.name,
                        &PatchParams::default(),
                        &Patch::Merge(&patch),
                    )
                    .await?;
                published
            }
            Publication::Create { published, event } => {
                events.create(&PostParams::default(), &event).await?;
                published
            }
        };
        self.remembered.remember(key, published);
        Ok(())
    }

    /// What to send for the event `key`, at the time on the recorder's clock.
    fn prepare(
        &self,
        key: &EventKey,
        regarding: &ObjectReference,
        warning: bool,
        reason: &str,
        note: &str,
    ) -> Publication {
        let reading = self.clock.read();
        let stamp = MicroTime(reading.wall);
        if let Some(repeated) = self.remembered.repeat_of(key, reading.instant) {
            let mut published = repeated.clone();
            published.count += 1;
            published.at = reading.instant;
            let patch = serde_json::json!({
                "series": EventSeries {
                    count: published.count,
                    last_observed_time: stamp,
                }
            });
            return Publication::Count { published, patch };
        }
        let name = format!(
            "{}.{:x}",
            regarding.name.as_deref().unwrap_or(&self.controller),
            stamp.0.as_nanosecond()
        );
        let event = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(
                    regarding
                        .namespace
                        .clone()
                        .unwrap_or_else(|| "default".to_owned()),
                ),
                ..ObjectMeta::default()
            },
            event_time: Some(stamp),
            type_: Some(if warning { "Warning" } else { "Normal" }.to_owned()),
            reason: Some(reason.to_owned()),
            action: Some(reason.to_owned()),
            note: Some(note.to_owned()),
            regarding: Some(regarding.clone()),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        };
        Publication::Create {
            published: Published {
                name,
                count: 1,
                at: reading.instant,
            },
            event: Box::new(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(uid: &str) -> ObjectReference {
        ObjectReference {
            namespace: Some("ns".into()),
            name: Some(format!("w-{uid}")),
            uid: Some(uid.into()),
            ..ObjectReference::default()
        }
    }

    fn warning_key(uid: &str, note: &str) -> EventKey {
        EventKey::new(&reference(uid), true, "Pending", note)
    }

    fn published(name: &str, at: Instant) -> Published {
        Published {
            name: name.into(),
            count: 1,
            at,
        }
    }

    #[test]
    fn the_same_event_within_the_window_repeats_and_another_note_does_not() {
        let mut remembered = Remembered::default();
        let start = Instant::now();
        let key = warning_key("u1", "no quota");
        remembered.remember(key.clone(), published("w-u1.1", start));

        let later = start + SERIES_WINDOW - Duration::from_secs(1);
        let repeat = remembered.repeat_of(&key, later);
        assert_eq!(repeat.map(|p| p.name.as_str()), Some("w-u1.1"));
        let other_note = warning_key("u1", "no quota in flavor b");
        assert_eq!(remembered.repeat_of(&other_note, later), None);
        let other_object = warning_key("u2", "no quota");
        assert_eq!(remembered.repeat_of(&other_object, later), None);
        assert_eq!(
            remembered.repeat_of(&key, start + SERIES_WINDOW),
            None,
            "too late"
        );
    }

    #[test]
    fn only_the_latest_events_are_remembered() {
        let mut remembered = Remembered::default();
        let now = Instant::now();
        let keys: Vec<EventKey> = (0..CAPACITY + 10)
            .map(|i| warning_key(&i.to_string(), "no quota"))
            .collect();
        for (i, key) in keys.iter().enumerate() {
            remembered.remember(key.clone(), published(&i.to_string(), now));
            // The first key keeps repeating, so it stays the most recent but one.
            if i > 0 {
                remembered.remember(keys[0].clone(), published("0", now));
            }
        }
        assert_eq!(remembered.len(), CAPACITY);
        assert!(
            remembered.repeat_of(&keys[0], now).is_some(),
            "repeated lately"
        );
        assert!(
            remembered.repeat_of(&keys[1], now).is_none(),
            "the oldest is gone"
        );
        assert!(remembered.repeat_of(&keys[CAPACITY + 9], now).is_some());
        assert!(remembered.order.len() <= 2 * CAPACITY);
    }

    #[test]
    fn a_repeated_event_keeps_one_copy_of_its_key() {
        let mut remembered = Remembered::default();
        let now = Instant::now();
        let key = warning_key("u1", "no quota");
        for i in 0..3 {
            remembered.remember(key.clone(), published(&i.to_string(), now));
        }
        let (held, _) = remembered.by_key.get_key_value(&key).expect("remembered");
        assert_eq!(remembered.order.len(), 3);
        assert!(remembered.order.iter().all(|(_, k)| Arc::ptr_eq(k, held)));
    }

    /// A repeat within the window is counted on the Event first published, stamped with the
    /// recorder's clock; past the window the same event is created anew.
    #[tokio::test]
    async fn a_repeat_is_counted_by_the_time_on_the_recorders_clock() {
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
        let client = Client::try_from(config).expect("a client");
        let start: k8s_openapi::jiff::Timestamp = "2026-11-23T10:00:00Z".parse().unwrap();
        let clock = Clock::manual(start);
        let mut recorder = Recorder::new(client, "kueue-admission", None, clock.clone());
        let regarding = reference("u1");
        let key = warning_key("u1", "no quota");
        let prepare =
            |recorder: &Recorder| recorder.prepare(&key, &regarding, true, "Pending", "no quota");

        let Publication::Create { published, event } = prepare(&recorder) else {
            panic!("the first event is created");
        };
        assert_eq!(event.event_time, Some(MicroTime(start)));
        assert_eq!(published.name, format!("w-u1.{:x}", start.as_nanosecond()));
        recorder.remembered.remember(key.clone(), published);

        clock.advance(SERIES_WINDOW - Duration::from_secs(1));
        let Publication::Count { published, patch } = prepare(&recorder) else {
            panic!("a repeat within the window is counted");
        };
        assert_eq!(published.count, 2);
        assert_eq!(patch["series"]["count"], 2);
        assert_eq!(
            patch["series"]["lastObservedTime"],
            serde_json::json!(MicroTime(clock.wall()))
        );
        recorder.remembered.remember(key.clone(), published);

        clock.advance(SERIES_WINDOW);
        assert!(
            matches!(prepare(&recorder), Publication::Create { .. }),
            "a repeat past the window is a new Event"
        );
    }
}
