# nfsgit: the driver. Git's own Makefile lives in build/git.
#
#   make demo         build everything, then clone onto a simulated NFS
#                     mount with both stock Gits and nfsgit side by side
#   make              deps, fetch, tree, build and install nfsgit
#   make test         the whole upstream suite plus ours (see README.md)
#   make test-quick   the scripts for the areas the series touches
#   make test-mount   the suite with its trash directories on a latencyfs
#                     mount, nfsgit and (where it fails) stock; then the
#                     checkout, clean, status, worktree, submodule and
#                     case-insensitive scripts again on a casefold mount
#   make test-faults  faults in the middle of a checkout, stock and nfsgit
#                     side by side (tools/fault-compare)
#   make test-diff-quick  the differential tester's CI slice: fixed seeds,
#                     stock and nfsgit side by side on latencyfs
#                     (tools/difftest, a few minutes)
#   make test-diff DURATION=7200  the same from random seeds for as long
#                     as asked (default 600 s); cases in build/difftest
#   make stock        the two peers of every comparison, built the same
#                     way as nfsgit: pristine upstream (the base) in
#                     build/stock, Debian stable's Git in build/stable
#   make check        the gates upstream's CI applies (DEVELOPER=1,
#                     headers, sparse, coccicheck, the documentation,
#                     NO_PTHREADS, Meson, sha256, the TEST-vars job) over
#                     the series, in trees under build/check
#                     (tools/check; GATES=a,b runs some of them)
#   make export       write build/git's series to patches/
#   make export-upstream  each topic as a mailing-list series in
#                     build/upstream-series (format-patch --cover-letter,
#                     your git identity, Signed-off-by), checked with
#                     git am on a clean base (tools/export-upstream)
#   make rebase-check UPSTREAM_REF=master  apply patches/ on another
#                     upstream commit and report, per patch, applies /
#                     merges / conflicts (tools/rebase-check; the
#                     repository: UPSTREAM_REPO, default github.com/git/git)
#   make deb          Debian's packages of the pinned release plus the
#                     series, in build/deb (tools/make-deb; for another
#                     Debian release than this machine's: DEB_RELEASE=trixie)
#   make test-deb     install them on a fresh Debian root, use them, roll
#                     them back (tools/test-deb)
#   make latencyfs    the NFS simulator, in build/latencyfs
#   make bench        nfsgit vs stock 2.55.0 and 2.47.3 on latencyfs, all
#                     scenarios (bench/run)
#   make bench-quick  the same, CI-sized (about 8 minutes; the full run
#                     about 40)
#
# Variables: prefix (install location, default build/install),
# JOBS (parallel make and test jobs, default: number of cores),
# DEB_RELEASE (make deb: the Debian release to build for).

include UPSTREAM

TOP := $(CURDIR)
prefix ?= $(TOP)/build/install
stock_prefix ?= $(TOP)/build/stock-install
stable_prefix ?= $(TOP)/build/stable-install
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TARBALL := downloads/git-$(UPSTREAM_VERSION).tar.xz
STABLE_TARBALL := downloads/git-$(STABLE_VERSION).tar.xz
CCACHE := $(shell command -v ccache 2>/dev/null)
# Let ccache share objects between checkouts at different paths (CI
# builds in a fresh clone).
export CCACHE_BASEDIR := $(TOP)/build
export CCACHE_NOHASHDIR := 1

# The same build configuration for nfsgit and stock: zlib, OpenSSL,
# libcurl and expat are found by Git's Makefile; pcre2 must be asked for.
define CONFIG_MAK
# Written by nfsgit's top-level Makefile; edits are overwritten.
CC = $(if $(CCACHE),ccache )gcc
USE_LIBPCRE2 = YesPlease
NO_TCLTK = YesPlease
endef
export CONFIG_MAK

.PHONY: all deps fetch tree build install stock stock-base test test-quick test-stock \
	test-mount test-faults test-diff test-diff-quick export latencyfs demo bench bench-quick clean FORCE \
	deb test-deb gix rebase-check export-upstream check

all: install

deps:
	@tools/install-deps

fetch: $(TARBALL)
$(TARBALL): UPSTREAM
	@tools/fetch-upstream
$(STABLE_TARBALL): UPSTREAM
	@tools/fetch-upstream --stable

tree: deps fetch
	@tools/make-tree $(if $(FORCE),--force)

# config.mak is only rewritten when it changes, so it does not force a
# rebuild.
%/config.mak: FORCE
	@printf '%s\n' "$$CONFIG_MAK" >$@.tmp && \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

build/git/config.mak: | tree
build/stock/config.mak: | build/stock/Makefile
build/stable/config.mak: | build/stable/Makefile

build: tree build/git/config.mak
	$(MAKE) -C build/git -j$(JOBS) prefix=$(prefix) all

install: build
	$(MAKE) -C build/git -j$(JOBS) prefix=$(prefix) install >/dev/null
	@echo "installed: $(prefix)/bin/git ($$($(prefix)/bin/git version))"

build/stock/Makefile: | $(TARBALL)
	rm -rf build/stock && mkdir -p build/stock
	tar -C build/stock --strip-components=1 -xJf $(TARBALL)

build/stable/Makefile: | $(STABLE_TARBALL)
	rm -rf build/stable && mkdir -p build/stable
	tar -C build/stable --strip-components=1 -xJf $(STABLE_TARBALL)

# A tree unpacked from another version's tarball is replaced (UPSTREAM
# changed since it was unpacked).
# stock-base: the base alone (what the differential tester compares with).
stock: stock-base $(STABLE_TARBALL)
	@test "$$(cat build/stable/version 2>/dev/null)" = $(STABLE_VERSION) || rm -rf build/stable
	$(MAKE) build/stable/Makefile build/stable/config.mak
	$(MAKE) -C build/stable -j$(JOBS) prefix=$(stable_prefix) all
	$(MAKE) -C build/stable -j$(JOBS) prefix=$(stable_prefix) install >/dev/null
	@echo "installed: $(stable_prefix)/bin/git ($$($(stable_prefix)/bin/git version))"

stock-base: deps fetch
	@test "$$(cat build/stock/version 2>/dev/null)" = $(UPSTREAM_VERSION) || rm -rf build/stock
	$(MAKE) build/stock/Makefile build/stock/config.mak
	$(MAKE) -C build/stock -j$(JOBS) prefix=$(stock_prefix) all
	$(MAKE) -C build/stock -j$(JOBS) prefix=$(stock_prefix) install >/dev/null
	@echo "installed: $(stock_prefix)/bin/git ($$($(stock_prefix)/bin/git version))"

export:
	@tools/export-series

# gitoxide's gix, the fastest other Git a user can pick, for the bench
# scenarios that compare with it (status, clone): the pinned release from
# crates.io, built once with cargo (rustup's, about 15 minutes on 2 cores)
GITOXIDE_VERSION = 0.61.0
CARGO = $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)
gix: build/gix/bin/gix
build/gix/bin/gix:
	$(CARGO) install gitoxide --locked --version $(GITOXIDE_VERSION) \
		--no-default-features --features max-pure --root $(TOP)/build/gix

deb: tree
	@tools/install-deps --deb
	@tools/make-deb

test-deb:
	@tools/install-deps --deb
	@tools/test-deb

LATENCYFS := $(TOP)/build/latencyfs/latencyfs
export LATENCYFS

latencyfs: deps
	$(MAKE) -C tools/latencyfs O=$(TOP)/build/latencyfs

test: install latencyfs
	$(MAKE) -C build/git/t test-lint check-meson
	tools/run-tests --jobs $(JOBS) --extra tools/latencyfs/test.sh build/git
	$(MAKE) test-diff-quick

test-quick: build latencyfs
	tools/run-tests --jobs $(JOBS) --list tools/quick-tests \
		--extra tools/latencyfs/test.sh build/git

test-mount: build stock latencyfs
	tools/test-mount --jobs $(JOBS) --list tools/mount-tests
	tools/test-mount --jobs $(JOBS) --list tools/mount-tests-casefold --casefold

test-faults: install stock latencyfs
	tools/fault-compare

# The differential tester (tools/difftest, TESTING.md): the CI slice is
# a fixed list of seeds, run by "make test" after the suite (a
# divergence fails it); the long run starts from a seed drawn from the
# clock unless SEED is given.  Both use the installed binaries (make,
# make stock) as they are, and build stock 2.55.0 if it is not there;
# NFSGIT= names another nfsgit binary.
DIFF_SEEDS ?= 1-60
DURATION ?= 600
NFSGIT ?= $(prefix)/bin/git
test-diff-quick: latencyfs
	@test -x $(stock_prefix)/bin/git || $(MAKE) stock-base
	tools/difftest --seeds $(DIFF_SEEDS) --no-shrink --nfsgit $(NFSGIT)

test-diff: latencyfs
	@test -x $(stock_prefix)/bin/git || $(MAKE) stock-base
	tools/difftest --seeds $(or $(SEED),$$(date +%s))-99999999999 \
		--duration $(DURATION) --nfsgit $(NFSGIT)

UPSTREAM_REF ?= master
UPSTREAM_REPO ?= https://github.com/git/git.git
export-upstream: tree
	tools/export-upstream

check: latencyfs
	tools/install-deps --check
	LATENCYFS=$(TOP)/build/latencyfs/latencyfs tools/check --jobs $(JOBS) \
		$(if $(GATES),--only $(GATES))

rebase-check:
	tools/rebase-check --repo $(UPSTREAM_REPO) $(UPSTREAM_REF)

test-stock: stock
	tools/run-tests --jobs $(JOBS) --local-only build/stock

demo: install stock latencyfs
	bench/demo

bench: install stock latencyfs gix
	bench/run

bench-quick: install stock latencyfs
	bench/run --quick

# clone and Checkout I/II of the Linux 6.1 and 6.12 trees (about half an
# hour; one run per case, as each work tree is 1.3 GB in the tmpfs)
bench-linux: install stock latencyfs
	bench/s2-clone.sh --repo linux --reps 1
	bench/s3-checkout.sh --repo linux --reps 1

clean:
	-$(MAKE) -C build/git clean >/dev/null
	rm -rf build/stock build/stock-install build/stable build/stable-install build/install
