//! How many connections a server holds at once: in all, and from one peer address. A server that
//! reaches either bound closes the next connection at once instead of queueing it, so a client
//! that opens connections without end cannot take a replica's memory or file descriptors, and
//! the API server, which calls from few addresses and keeps its connections alive, keeps its
//! share while one peer is refused.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Kueue's servers have no such bounds; these leave room for every API server replica's
/// connection pool many times over.
pub const MAX_CONNECTIONS: usize = 1024;
pub const MAX_CONNECTIONS_PER_PEER: usize = 256;

/// The connections a server holds now.
#[derive(Debug)]
pub struct ConnectionGate {
    total: usize,
    per_peer: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_peer: HashMap<IpAddr, usize>,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct ConnectionPermit {
    gate: Arc<ConnectionGate>,
    peer: IpAddr,
}

impl ConnectionGate {
    pub fn new(total: usize, per_peer: usize) -> Arc<Self> {
        Arc::new(ConnectionGate {
            total,
            per_peer,
            held: Mutex::new(Held::default()),
        })
    }

    /// A place for a connection from `peer`, unless a bound is reached.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<ConnectionPermit> {
        let mut held = self.held.lock().ok()?;
        let from_peer = held.by_peer.get(&peer).copied().unwrap_or(0);
        if held.total >= self.total || from_peer >= self.per_peer {
            return None;
        }
        held.total += 1;
        held.by_peer.insert(peer, from_peer + 1);
        Some(ConnectionPermit {
            gate: self.clone(),
            peer,
        })
    }

    /// Connections held now, in all.
    pub fn held(&self) -> usize {
        self.held.lock().map_or(0, |h| h.total)
    }
}

impl Drop for ConnectionPermit {
    fn drop(&mut self) {
        // A poisoned lock means a panic elsewhere already took the process down.
        let Ok(mut held) = self.gate.held.lock() else {
            return;
        };
        held.total = held.total.saturating_sub(1);
        if let Some(count) = held.by_peer.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
                held.by_peer.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests;
