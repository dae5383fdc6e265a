#!/usr/bin/env bash
# run.sh BUILD_DIR PYTHON - the vision oracle checks (oracle.py) against BUILD_DIR/vision_driver.
# PYTHON is a python3 that imports cv2 and numpy (mk/vision.mk finds it); without one the check
# fails, naming the packages: an oracle that is not there proves nothing. HTPU_TEST_EMU (e.g.
# qemu-aarch64 -L ...) runs a cross-built driver (make test-aarch64).
set -u
build=$1
py=${2:-}
if [ -z "$py" ]; then
  echo "test-vision: no python3 imports cv2 and numpy (Debian: apt-get install python3-opencv" \
    "python3-numpy opencv-doc)" >&2
  exit 1
fi
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" exec "$py" "$(dirname "$0")/oracle.py" "$build/vision_driver"
