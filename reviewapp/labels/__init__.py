"""What reviewers' labels become: exports, calibration, golden sets, worked examples."""
