# patchloop verification guard (pytest plugin); filled in by the verifier work.
