# syntax=docker/dockerfile:1
# The kuota controller image: built with the Rust toolchain on Debian 12, run on distroless's
# Debian 12 C runtime (glibc and libgcc, nothing else) as a numeric non-root user, so
# `runAsNonRoot` holds without a name lookup. TLS is rustls with ring: no OpenSSL at run time.
#
#   docker build -t ghcr.io/kuota/kuota:0.1.0 .
#
# The chart runs it as `kuota controller --config=/controller_manager_config.yaml`.

ARG RUST_VERSION=1.95

FROM docker.io/library/rust:${RUST_VERSION}-bookworm AS builder
WORKDIR /src
COPY . .
# Registry and target folders are cache mounts, so a rebuild recompiles only what changed.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin kuota \
    && install -D -m 0755 target/release/kuota /out/kuota

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=builder /out/kuota /kuota
# distroless's "nonroot" user, by number.
USER 65532:65532
ENTRYPOINT ["/kuota"]
CMD ["controller"]
