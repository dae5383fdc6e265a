# profile.mk - the profile page checked in a real browser (docs/profiling.md).
#
#   make check-profile-page   htpu profile of models/chain100 written as a page, opened in
#                             headless Chromium (Debian's `chromium`): the page's own script
#                             must have run and counted 100 bars and 100 ops on the timeline;
#                             a screenshot is left in $(BUILD)/profile-page/page.png to look at.
#
# Variables: CHROMIUM (default: chromium).

CHROMIUM ?= chromium
PAGE_DIR := $(BUILD)/profile-page

.PHONY: check-profile-page
check-profile-page: $(HTPU) $(REFBUILD) $(REF_BACKEND) $(REF_SYSTEM)
	@command -v $(CHROMIUM) >/dev/null || { echo "check-profile-page: $(CHROMIUM) not found \
	  (apt-get install chromium)"; exit 1; }
	@mkdir -p $(PAGE_DIR)
	$(Q)$(REFBUILD) models/chain100/chain100.txt $(PAGE_DIR)/chain100.bin
	$(Q)$(HTPU) profile $(PAGE_DIR)/chain100.bin --backend reference -n 5 \
	  --html $(PAGE_DIR)/page.html >/dev/null
	$(Q)timeout 120 $(CHROMIUM) --headless --no-sandbox --disable-gpu --dump-dom \
	  file://$(CURDIR)/$(PAGE_DIR)/page.html 2>/dev/null > $(PAGE_DIR)/dom.html
	$(Q)grep -qF 'data-rendered="100 bars, 100 ops"' $(PAGE_DIR)/dom.html || { \
	  echo "check-profile-page: the page did not render its 100 bars and ops in $(CHROMIUM)"; \
	  exit 1; }
	$(Q)timeout 120 $(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars \
	  --window-size=1000,2000 --screenshot=$(PAGE_DIR)/page.png \
	  file://$(CURDIR)/$(PAGE_DIR)/page.html 2>/dev/null
	$(Q)test -s $(PAGE_DIR)/page.png
	@echo "check-profile-page: rendered in $(CHROMIUM) (100 bars, 100 ops); screenshot $(PAGE_DIR)/page.png"
