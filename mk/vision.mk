# vision.mk - the vision room's oracle checks (src/vision/, docs/vision.md).
#
#   make test-vision [BUILD=build/asan]
#        builds $(BUILD)/vision_driver and runs test/vision/oracle.py against OpenCV and NumPy
#        (Debian: python3-opencv python3-numpy, and opencv-doc for its photographs); part of
#        `make test`.

# the first python3 that imports cv2 and numpy (pyenv shims may hide Debian's packages)
VISION_PYTHON ?= $(shell for p in python3 /usr/bin/python3; do \
  $$p -c 'import cv2, numpy' >/dev/null 2>&1 && { command -v $$p; break; }; done)

$(BUILD)/vision_driver: $(call obj,test/vision/driver.c) $(LIB_A)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

.PHONY: test-vision
test-vision: $(BUILD)/vision_driver
	$(Q)bash test/vision/run.sh $(BUILD) "$(VISION_PYTHON)"
