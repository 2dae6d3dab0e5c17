# The patchloop GitHub Action image built from source: a static musl binary plus git on
# Alpine. Releases do not use it for the published image (action.yml names
# ghcr.io/…:vX.Y.Z, built by .github/workflows/release.yml from Dockerfile.prebuilt); it is
# the path for forks (set `image: Dockerfile` in action.yml) and for building the image
# yourself. Without any registry, scripts/build-action-image builds an equivalent image.
# The runner mounts /var/run/docker.sock; sandbox images are built from a tar stream, so
# the workspace path inside this container (/github/workspace) is never used as a host path.

FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev gcc g++ make cmake perl git
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY images ./images
COPY docs ./docs
RUN cargo build --release --locked --bin patchloop \
 && strip target/release/patchloop

# `docker build --target binary --output type=local,dest=out .` exports just the static
# binary (the release workflow does this on a native runner per architecture).
FROM scratch AS binary
COPY --from=build /src/target/release/patchloop /patchloop

FROM alpine:3.20
RUN apk add --no-cache git ca-certificates tini \
 && git config --system --add safe.directory /github/workspace
COPY --from=build /src/target/release/patchloop /usr/local/bin/patchloop
# GitHub runs container actions as root with the workspace at /github/workspace; do not
# rely on WORKDIR (the runner overrides it).
ENTRYPOINT ["/sbin/tini", "--", "/usr/local/bin/patchloop"]
CMD ["action"]
