//! Hostile traffic sent straight to the replica's webhook port, which answers anyone who reaches
//! it: bodies declaring more than the limit, bodies of deeply nested arrays as large as the limit,
//! truncated bodies, bodies sent a byte a second, chunked bodies that grow past the limit and
//! thousands of valid-looking reviews at once, all from one peer (an attacking pod). Meanwhile a
//! valid review from the address the API server calls from is answered within [`PROBE_BOUND`] on
//! a kept-alive connection and within the API server's timeout on a new one, Jobs created through
//! the API server pass the webhooks, the process's peak memory stays under
//! [`PEAK_RSS_BOUND_MIB`], and afterwards it is alive and healthy.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::net::TcpStream;
use tokio::task::JoinSet;
use tokio_rustls::TlsConnector;

use super::release::Release;
use super::support::{TestNamespace, kueue};

#[path = "hostile/attacks.rs"]
mod attacks;

use attacks::{
    Attack, Stream, Tally, VALIDATE_JOB, connect, connector, head, job_review, nested_review,
    status_of,
};

/// How long the attack lasts: three times the body deadline, so slow bodies are cut and their
/// connections come back while the rest goes on.
const ATTACK: Duration = Duration::from_secs(30);
/// A valid review on a connection the API server keeps alive must be answered within this while
/// under attack: kuota answers one in milliseconds, the review does not wait on the body budget
/// the attack drains (calls waiting for room do not queue), and the attack's connections from
/// its one address share the replica's cores with the API server's. Two seconds leave room for
/// a debug build on two cores shared with the attacker, and are a fifth of the 10 s the API
/// server waits (the webhooks' timeoutSeconds) before it fails the call. A new connection must be
/// answered within those 10 s: under a flood of connections the kernel drops some of its SYNs
/// (the accept queue is full), which it sends again after 1 s, then 2 s more.
const PROBE_BOUND: Duration = Duration::from_secs(2);
/// The replica's peak resident memory under attack. Measured (docs/performance.md): about 73 MiB
/// before the attack and 117 to 134 MiB at its peak; the bound is the 64 MiB body budget and the held
/// connections' buffers on top of the baseline, with room to spare, and half the chart's
/// 512 MiB memory limit.
const PEAK_RSS_BOUND_MIB: u64 = 256;
/// One valid review on `s`: its latency, or why it failed.
async fn review_on(s: &mut impl Stream, n: usize) -> Result<Duration> {
    let began = Instant::now();
    let body = job_review(&format!("probe-{n}"));
    s.write_all(head(VALIDATE_JOB, Some(body.len())).as_bytes())
        .await?;
    s.write_all(&body).await?;
    let code = status_of(s).await?;
    ensure!(code == 200, "answered {code}");
    Ok(began.elapsed())
}

/// One valid review on a new connection to `target`: the time to the end of the TLS handshake
/// and to the answer, or why it failed.
async fn review_on_new(
    tls: &TlsConnector,
    target: SocketAddr,
    n: usize,
) -> Result<(Duration, Duration)> {
    let began = Instant::now();
    let mut s = connect(tls, target).await?;
    let connected = began.elapsed();
    review_on(&mut s, n).await?;
    Ok((connected, began.elapsed()))
}

/// Connections this machine's kernel dropped because a listener's accept queue was full
/// (`ListenOverflows`, for every listener of the network namespace).
fn listen_overflows() -> u64 {
    let netstat = std::fs::read_to_string("/proc/net/netstat").unwrap_or_default();
    let lines: Vec<&str> = netstat.lines().collect();
    lines
        .chunks(2)
        .filter(|pair| pair[0].starts_with("TcpExt:"))
        .find_map(|pair| {
            let names = pair[0].split_whitespace();
            let values = pair.get(1)?.split_whitespace();
            names
                .zip(values)
                .find(|(name, _)| *name == "ListenOverflows")
                .and_then(|(_, value)| value.parse().ok())
        })
        .unwrap_or(0)
}

fn status_field(pid: u32, field: &str) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("read /proc/{pid}/status: is the controller alive?"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in /proc/{pid}/status"))
}

/// CPU time the process has used, user and system, in seconds.
fn cpu_seconds(pid: u32) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("read /proc/{pid}/stat"))?;
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command's closing paren.
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i).and_then(|v| v.parse::<u64>().ok()))
        .sum();
    // The kernel's USER_HZ, 100 on every Linux architecture kuota runs on.
    Ok(ticks as f64 / 100.0)
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// The address the API server reaches the replica at: the endpoint `deploy` routed the webhook
/// Service to.
async fn endpoint_address(client: &Client, release: &Release) -> Result<IpAddr> {
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), &release.namespace);
    let slice = slices
        .get(&format!("{}-local-webhook", release.name))
        .await
        .context("read the webhook Service's EndpointSlice")?;
    slice
        .endpoints
        .first()
        .and_then(|e| e.addresses.first())
        .and_then(|a| a.parse().ok())
        .context("the webhook EndpointSlice names no address")
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted
        .get((sorted.len() * p / 100).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

pub async fn the_webhook_port_withstands_hostile_traffic(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let pid = release.controller_pid()?;
    let port = release.webhook_port()?;
    let attacker = SocketAddr::from(([127, 0, 0, 1], port));
    let honest = SocketAddr::new(endpoint_address(client, release).await?, port);
    let tls = connector()?;
    let ns = TestNamespace::create(client, "deploy-hostile").await?;
    let cq = super::support::unique_name("hostile-cq");
    kueue::queue(
        client,
        &ns.name,
        &cq,
        &super::support::unique_name("hostile-rf"),
        "100",
        "",
    )
    .await?;
    // The API server's connection, open before the attack as its kept-alive pool is.
    let mut kept = connect(&tls, honest).await?;
    review_on(&mut kept, 0)
        .await
        .context("a review before the attack")?;
    // Settled after start-up, before the attack.
    let baseline = (status_field(pid, "VmRSS:")?, status_field(pid, "VmHWM:")?);

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let attack = Arc::new(Attack {
        tls: tls.clone(),
        target: attacker,
        stop: stop.clone(),
        tally: tally.clone(),
    });
    let nested = Arc::new(nested_review());
    let mut attackers = JoinSet::new();
    for _ in 0..8 {
        attackers.spawn(attack.clone().oversized());
        attackers.spawn(attack.clone().chunked());
    }
    for _ in 0..12 {
        attackers.spawn(attack.clone().nested(nested.clone()));
    }
    for _ in 0..16 {
        attackers.spawn(attack.clone().truncated());
    }
    for _ in 0..64 {
        attackers.spawn(attack.clone().slow());
    }
    for worker in 0..2000 {
        attackers.spawn(attack.clone().flood(worker));
    }

    let began = Instant::now();
    let cpu_before = cpu_seconds(pid)?;
    let overflows_before = listen_overflows();
    // Jobs naming a queue created through the API server, which calls the Job webhooks (failing
    // closed) from its own address, once a second.
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let queue = format!("lq-{cq}");
    let creating = tokio::spawn(async move {
        let mut outcomes = Vec::new();
        let mut n = 0;
        while began.elapsed() < ATTACK {
            n += 1;
            let name = format!("job-{n}");
            let labels = serde_json::json!({"kueue.x-k8s.io/queue-name": queue});
            let created = match kueue::one_pod_job(&name, labels) {
                Ok(job) => jobs
                    .create(&PostParams::default(), &job)
                    .await
                    .map(drop)
                    .map_err(|e| format!("create Job {name}: {e}")),
                Err(error) => Err(format!("{name}: {error}")),
            };
            outcomes.push(created);
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        outcomes
    });
    // New connections from the API server's address, once a second, each answered within the
    // 10 s the API server waits or failed.
    let opening = {
        let tls = tls.clone();
        tokio::spawn(async move {
            let mut outcomes = Vec::new();
            let mut n = 0;
            while began.elapsed() < ATTACK {
                n += 1;
                let opened = tokio::time::timeout(
                    Duration::from_secs(10),
                    review_on_new(&tls, honest, 100_000 + n),
                )
                .await;
                outcomes.push(match opened {
                    Ok(Ok(times)) => Ok(times),
                    Ok(Err(error)) => Err(format!("review on new connection {n}: {error:#}")),
                    Err(_) => Err(format!(
                        "review on new connection {n}: no answer within 10 s"
                    )),
                });
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            outcomes
        })
    };
    // Reviews on the connection the API server had open before the attack, every 250 ms.
    let mut latencies = Vec::new();
    let mut failures = Vec::new();
    let mut n = 0;
    while began.elapsed() < ATTACK {
        n += 1;
        match tokio::time::timeout(Duration::from_secs(10), review_on(&mut kept, n)).await {
            Ok(Ok(latency)) => latencies.push(latency),
            Ok(Err(error)) => failures.push(format!("review {n}: {error:#}")),
            Err(_) => failures.push(format!("review {n}: no answer within 10 s")),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let opened = opening.await.context("the new connections' task")?;
    let mut handshakes = Vec::new();
    let mut answered_new = Vec::new();
    for outcome in opened {
        match outcome {
            Ok((handshake, answered)) => {
                handshakes.push(handshake);
                answered_new.push(answered);
            }
            Err(failure) => failures.push(failure),
        }
    }
    let cpu = cpu_seconds(pid)? - cpu_before;
    let overflows = listen_overflows() - overflows_before;
    let created = creating.await.context("the Job creations' task")?;
    let created_count = created.iter().filter(|c| c.is_ok()).count();
    failures.extend(created.into_iter().filter_map(Result::err));
    stop.store(true, Ordering::Relaxed);
    // Slow bodies stop within the body deadline; give every attacker that long to notice.
    let drained = tokio::time::timeout(Duration::from_secs(30), async {
        while attackers.join_next().await.is_some() {}
    })
    .await;
    attackers.abort_all();
    let peak = status_field(pid, "VmHWM:")?;
    latencies.sort();
    handshakes.sort();
    answered_new.sort();
    let report = format!(
        "peak RSS {} MiB before the attack ({} MiB resident), {} MiB under it; CPU {:.1} s in \
         {:?}; valid reviews on a kept-alive connection: {} answered, p50 {:?}, p99 {:?}, max \
         {:?}; on new connections: {} answered, p50 {:?}, max {:?} (TLS handshake done at p50 \
         {:?}, max {:?}; {overflows} connections dropped by full accept queues on this \
         machine); Jobs created through the API server: {created_count}\n\
         answers to the attack:\n{}",
        baseline.1 / 1024,
        baseline.0 / 1024,
        peak / 1024,
        cpu,
        ATTACK,
        latencies.len(),
        percentile(&latencies, 50),
        percentile(&latencies, 99),
        latencies.last().copied().unwrap_or_default(),
        answered_new.len(),
        percentile(&answered_new, 50),
        answered_new.last().copied().unwrap_or_default(),
        percentile(&handshakes, 50),
        handshakes.last().copied().unwrap_or_default(),
        tally.report()
    );
    println!("{report}");

    ensure!(
        alive(pid),
        "the controller (pid {pid}) died under attack\n{report}\nkuota log:\n{}",
        release.log_tail()
    );
    ensure!(
        failures.is_empty(),
        "honest calls failed under attack: {failures:#?}\n{report}"
    );
    ensure!(
        latencies.last().is_some_and(|max| *max <= PROBE_BOUND),
        "a valid review on a kept-alive connection took more than {PROBE_BOUND:?} under \
         attack\n{report}"
    );
    ensure!(
        peak < PEAK_RSS_BOUND_MIB * 1024,
        "peak RSS {} MiB, over the {PEAK_RSS_BOUND_MIB} MiB bound\n{report}",
        peak / 1024
    );
    ensure!(
        drained.is_ok(),
        "attackers still held connections 30 s after the attack\n{report}"
    );
    // Each attack met the bound meant for it.
    for (attack, answer) in [
        ("oversized", "413"),
        // Decoded from the raw bytes as a Job, which an array is not: a refusal in the review.
        ("nested", "200"),
        ("slow", "408"),
        ("chunked", "400"),
        ("flood", "200"),
    ] {
        ensure!(
            tally.count(attack, answer) > 0,
            "no {attack} call was answered {answer}\n{report}"
        );
    }
    let health = release.health_port()?;
    let healthz = http_get(health, "/healthz").await?;
    ensure!(
        healthz == 200,
        "/healthz answered {healthz} after the attack"
    );
    ns.delete().await
}

/// `GET path` over plain HTTP on 127.0.0.1:`port`; the status code.
async fn http_get(port: u16, path: &str) -> Result<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await?;
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await?;
    status_of(&mut s).await
}
