//! Prints patchloop's seccomp profile (for `docker run --security-opt seccomp=FILE` experiments).
fn main() {
    println!("{:#}", patchloop::sandbox::seccomp::profile());
}
