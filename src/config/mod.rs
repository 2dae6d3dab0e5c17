//! Configuration: `.github/patchloop.yml`, org defaults, action inputs.
