# nczarr-rs: one Rust staticlib, linked twice into the two shared libraries
# (see doc/spec/passthrough.md section 2):
#   build/libnetcdf.so.19      drop-in libnetcdf (SONAME libnetcdf.so.19): API + tool helpers
#   build/libnczarr_preload.so for LD_PRELOAD in front of a real netcdf-c: API only
# and, when an MPI compiler (mpicc) is present, the parallel pair (csrc/par_mpi.c + the same
# archive; the serial libraries never link MPI):
#   build/libnetcdf_mpi.so.19        drop-in for Debian's libnetcdf-mpi-19 (netcdf_par.h)
#   build/libnczarr_mpi_preload.so   for LD_PRELOAD in front of Debian's parallel netcdf-c
#
#   make            build both libraries and the config files
#   make deps       install what the tests drive (apt; pip into .venv; cargo); make check runs it first
#   make check      every test: Rust units, C tests, real clients, Python interop, CMake consumer
#   make check-<suite> T=<text>   one suite, only its cases whose name contains <text>
#                   (e.g. make check-c T=t_atts, make check-s3 T=faults); one line per check
#   make headers    render include/*.h from the C ABI crate (headers/; committed, checked in CI)
#   make demo       create a dataset on local storage and show it with ncdump and zarr-python
#   make fuzz       thousands of differential sequences and hostile stores, the parser fuzz targets
#                   and every crash point of every update the crash-point tester knows
#   make install PREFIX=/usr/local

PREFIX  ?= /usr/local
CARGO   ?= cargo
CC      ?= cc
PYTHON  ?= python3
# Python packages live in the checkout's own virtual environment (ctests/ensure_deps.sh makes
# it; never the system Python): its bin/ comes first on PATH for every recipe.
NCZARR_VENV ?= $(CURDIR)/.venv
export NCZARR_VENV
export PATH := $(NCZARR_VENV)/bin:$(PATH)
# The emulated netcdf-c version, defined once in core/src/nc/version.rs (via netcdf_meta.h).
VERSION := $(shell sed -n 's/^\#define NC_VERSION "\(.*\)"/\1/p' include/netcdf_meta.h)
SOVERSION := 19
BUILD   := build
TARGET  := target/release
LIB_A   := $(TARGET)/libnetcdf.a
DROPIN  := $(BUILD)/libnetcdf.so.$(SOVERSION)
PRELOAD := $(BUILD)/libnczarr_preload.so
STATIC  := $(BUILD)/libnetcdf.a
NATIVE_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
MPICC   ?= mpicc
MPI_LIB := $(BUILD)/libnetcdf_mpi.so.$(SOVERSION)
MPI_PRELOAD := $(BUILD)/libnczarr_mpi_preload.so
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo yes)
HEADERS := include/netcdf.h include/netcdf_meta.h include/netcdf_filter.h include/netcdf_mem.h include/netcdf_aux.h include/netcdf_nczarr.h

# netcdf-c internals the Debian tools import: exported by the drop-in only. (Public API such as
# the ncaux_* filter-spec parsers is in both libraries.)
TOOL_HELPERS := H5get_libversion Cdh2e NC__testurl NC_shellUnescape NCpathcanonical cdChar2Comp cdParseRelunits \
  cdRel2Iso cdSetErrOpts nc__testurl nc_utf8_to_utf16 nclistfree nclistnew nclistpush nclistremove \
  nclog ncsetlogging ncsetloglevel ncuriappendfragmentkey ncuribuild ncurifree ncuriparse strlcat
C_SYMBOLS := ncerr ncopts nc_advise nclog

.PHONY: all cargo deps headers check check-rust check-c check-fuzz fuzz check-compat check-clients check-passthrough check-s3 check-refs check-lazy check-icechunk check-cfa check-plugins check-python check-v3 check-cmake check-mpi check-crash demo install clean bench

all: $(DROPIN) $(PRELOAD) $(STATIC) $(BUILD)/nc-config $(BUILD)/netcdf.pc
ifeq ($(HAVE_MPI),yes)
all: $(MPI_LIB) $(MPI_PRELOAD) $(BUILD)/netcdf-mpi.pc
endif

cargo:
	$(CARGO) build --release --lib $(if $(filter no,$(ICECHUNK)),--no-default-features)

# The link rules depend on the phony `cargo` so they always see cargo's latest archive.
$(LIB_A) $(TARGET)/libnetcdf.so: cargo

# Exported names = our #[no_mangle] API (as cargo's cdylib exports it; dependencies such as
# bzip2-sys export C-ABI names too, so only netCDF names are kept) + the C shim.
$(BUILD)/exports.txt: cargo
	@mkdir -p $(BUILD)
	nm -D --defined-only $(TARGET)/libnetcdf.so | awk '{print $$3}' | grep -E '^(nc|NC|cd|Cd|strlcat$$|H5get_libversion$$)' | grep -v -E '^(nczarr_use_passthrough_numbering|nczarr_par_.*)$$' > $@.tmp
	for s in $(C_SYMBOLS); do echo $$s; done >> $@.tmp
	sort -u $@.tmp > $@ && rm -f $@.tmp

$(BUILD)/dropin.map: $(BUILD)/exports.txt
	{ echo '{ global:'; sed 's/$$/;/' $<; echo 'local: *; };'; } > $@

$(BUILD)/preload.txt: $(BUILD)/exports.txt
	for s in $(TOOL_HELPERS); do echo $$s; done | sort > $(BUILD)/helpers.txt
	comm -23 $< $(BUILD)/helpers.txt > $@

$(BUILD)/preload.map: $(BUILD)/preload.txt
	{ echo '{ global:'; sed 's/$$/;/' $<; echo 'local: *; };'; } > $@

$(DROPIN): cargo $(BUILD)/dropin.map
	sed 's/^/-Wl,--undefined=/' $(BUILD)/exports.txt > $(BUILD)/dropin.undef
	$(CC) -shared -o $@ -Wl,-soname,libnetcdf.so.$(SOVERSION) -Wl,--version-script=$(BUILD)/dropin.map \
	  @$(BUILD)/dropin.undef -Wl,--gc-sections -Wl,--strip-debug $(LIB_A) $(NATIVE_LIBS)
	ln -sf libnetcdf.so.$(SOVERSION) $(BUILD)/libnetcdf.so

$(PRELOAD): cargo $(BUILD)/preload.map csrc/preload_init.c
	sed 's/^/-Wl,--undefined=/' $(BUILD)/preload.txt > $(BUILD)/preload.undef
	$(CC) -shared -fPIC -o $@ -Wl,-soname,libnczarr_preload.so -Wl,--version-script=$(BUILD)/preload.map \
	  csrc/preload_init.c @$(BUILD)/preload.undef -Wl,--gc-sections -Wl,--strip-debug $(LIB_A) $(NATIVE_LIBS)

# The parallel libraries: the drop-in's exports plus nc_create_par/nc_open_par from the shim.
$(BUILD)/mpi.map: $(BUILD)/exports.txt
	{ echo '{ global:'; sed 's/$$/;/' $<; echo 'nc_create_par; nc_open_par;'; echo 'local: *; };'; } > $@

$(BUILD)/mpi_preload.map: $(BUILD)/preload.txt
	{ echo '{ global:'; sed 's/$$/;/' $<; echo 'nc_create_par; nc_open_par;'; echo 'local: *; };'; } > $@

$(MPI_LIB): cargo $(DROPIN) $(BUILD)/mpi.map csrc/par_mpi.c
	$(MPICC) -shared -fPIC -O2 -o $@ -Wl,-soname,libnetcdf_mpi.so.$(SOVERSION) -Wl,--version-script=$(BUILD)/mpi.map \
	  csrc/par_mpi.c @$(BUILD)/dropin.undef -Wl,--gc-sections -Wl,--strip-debug $(LIB_A) $(NATIVE_LIBS)
	ln -sf libnetcdf_mpi.so.$(SOVERSION) $(BUILD)/libnetcdf_mpi.so

$(MPI_PRELOAD): cargo $(PRELOAD) $(BUILD)/mpi_preload.map csrc/par_mpi.c csrc/preload_init.c
	$(MPICC) -shared -fPIC -O2 -DNCZARR_PRELOAD -o $@ -Wl,-soname,libnczarr_mpi_preload.so -Wl,--version-script=$(BUILD)/mpi_preload.map \
	  csrc/preload_init.c csrc/par_mpi.c @$(BUILD)/preload.undef -Wl,--gc-sections -Wl,--strip-debug $(LIB_A) $(NATIVE_LIBS) -ldl

$(BUILD)/netcdf-mpi.pc: cmake/netcdf-mpi.pc.in
	@mkdir -p $(BUILD)
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@NATIVE_LIBS@|$(NATIVE_LIBS)|g' $< > $@

$(STATIC): cargo
	@mkdir -p $(BUILD)
	cp $(LIB_A) $@

$(BUILD)/nc-config: cmake/nc-config.in
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@NATIVE_LIBS@|$(NATIVE_LIBS)|g' $< > $@
	chmod +x $@

$(BUILD)/netcdf.pc: cmake/netcdf.pc.in
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@NATIVE_LIBS@|$(NATIVE_LIBS)|g' $< > $@

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/netCDF $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(DROPIN) $(DESTDIR)$(PREFIX)/lib/libnetcdf.so.$(SOVERSION)
	ln -sf libnetcdf.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libnetcdf.so.22
	ln -sf libnetcdf.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libnetcdf.so
	install -m 0644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/libnetcdf.a
	install -m 0755 $(PRELOAD) $(DESTDIR)$(PREFIX)/lib/libnczarr_preload.so
	install -m 0644 $(HEADERS) $(DESTDIR)$(PREFIX)/include/
	install -m 0644 $(BUILD)/netcdf.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/netcdf.pc
	install -m 0755 $(BUILD)/nc-config $(DESTDIR)$(PREFIX)/bin/nc-config
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBNAME@|libnetcdf|g' -e 's|@HAS_PARALLEL@|no|g' cmake/netCDFConfig.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/netCDF/netCDFConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|g' cmake/netCDFConfigVersion.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/netCDF/netCDFConfigVersion.cmake
	if [ -f $(MPI_LIB) ]; then \
	  install -d $(DESTDIR)$(PREFIX)/lib/cmake/netCDF_mpi && \
	  install -m 0755 $(MPI_LIB) $(DESTDIR)$(PREFIX)/lib/libnetcdf_mpi.so.$(SOVERSION) && \
	  ln -sf libnetcdf_mpi.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libnetcdf_mpi.so && \
	  install -m 0755 $(MPI_PRELOAD) $(DESTDIR)$(PREFIX)/lib/libnczarr_mpi_preload.so && \
	  install -m 0644 include/netcdf_par.h $(DESTDIR)$(PREFIX)/include/ && \
	  install -m 0644 $(BUILD)/netcdf-mpi.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/netcdf-mpi.pc && \
	  sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBNAME@|libnetcdf_mpi|g' -e 's|@HAS_PARALLEL@|yes|g' cmake/netCDFConfig.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/netCDF_mpi/netCDFConfig.cmake && \
	  sed -e 's|@VERSION@|$(VERSION)|g' cmake/netCDFConfigVersion.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/netCDF_mpi/netCDFConfigVersion.cmake; \
	fi

deps:
	sh ctests/ensure_deps.sh

headers:
	$(CARGO) run --release -q -p nczarr-headers

check: deps all
	$(MAKE) --no-print-directory check-rust check-c check-fuzz check-crash check-compat check-clients check-passthrough check-s3 check-refs check-lazy check-icechunk check-cfa check-plugins check-python check-v3 check-cmake check-mpi
	@echo "make check: all suites passed"

# Generated sources: what each generator writes now must be what is committed (a difference
# is left in the tree to commit, or to fix in the generator).
GENERATED := src/ffi/data_matrix.rs src/ffi/att_matrix.rs ctests/c/t_abi.c ctests/tools/badids.c

check-generated:
	@mkdir -p $(BUILD)/generated
	@for f in $(GENERATED); do cp $$f $(BUILD)/generated/$$(basename $$f); done
	@python3 tools/gen_ffi_matrix.py > /dev/null && python3 tools/gen_abi_test.py > /dev/null && python3 tools/gen_badid_test.py > /dev/null
	@for f in $(GENERATED); do cmp -s $$f $(BUILD)/generated/$$(basename $$f) || { echo "$$f differs from what its generator (tools/gen_*.py) writes"; exit 1; }; done
	@echo "generated sources: as their generators write them"

check-rust: check-generated
	python3 tools/check_layers.py
	$(CARGO) fmt --all --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	$(CARGO) run --release -q -p nczarr-headers -- --check
	$(CARGO) test --release --workspace --lib --tests

check-c: all
	python3 tools/check_headers.py
	sh ctests/c/run.sh

# The differential tester (against netcdf-c 4.10.1 on HDF5) and the hostile-store fuzzer,
# a few hundred cases each with fixed seeds; `make fuzz` runs thousands (FUZZ_COUNT, FUZZ_SEED).
check-fuzz: all
	python3 ctests/fuzz/difftest.py --count 300 --seed 1
	python3 ctests/fuzz/hostile.py --count 300 --seed 1

FUZZ_COUNT ?= 5000
FUZZ_SEED ?= $(shell date +%s)
fuzz: all
	sh ctests/ensure_deps.sh
	@echo "make fuzz: $(FUZZ_COUNT) sequences and $(FUZZ_COUNT) hostile stores from seed $(FUZZ_SEED)"
	python3 ctests/fuzz/difftest.py --count $(FUZZ_COUNT) --seed $(FUZZ_SEED)
	python3 ctests/fuzz/hostile.py --count $(FUZZ_COUNT) --seed $(FUZZ_SEED)
	PROPTEST_CASES=2000 $(CARGO) test --release --workspace --lib fuzz_
	CRASH_ALL=1 sh ctests/crash/run.sh

# The crash-point tester (ctests/crash/run.sh): every crash point of renames and defines on
# directory, v3, zip, pure Zarr and S3 stores (a small set; make fuzz runs every scenario).
check-crash: all
	sh ctests/crash/run.sh

check-compat: all
	sh ctests/compat/run.sh

check-clients: all
	sh ctests/clients/run.sh

check-passthrough: all
	sh ctests/passthrough/run.sh

check-s3: all
	sh ctests/s3/run.sh

check-cfa: all
	sh ctests/cfa/run.sh

check-refs: all
	sh ctests/refs/run.sh

check-lazy: all
	sh ctests/lazy/run.sh

check-icechunk: all
	sh ctests/icechunk/run.sh

check-plugins: all
	sh ctests/plugins/run.sh

check-python: all
	sh ctests/python/run.sh

check-v3: all
	sh ctests/v3/run.sh

check-cmake: all
	sh ctests/cmake_consumer/run.sh

check-mpi: all
	sh ctests/mpi/run.sh

demo: all
	sh ctests/demo.sh

# The S3 peer rows want s3s-fs (a Rust S3 server, built once into build/tools; the last
# release that builds with rustc 1.95); without it they run on moto.
bench: all
	sh ctests/ensure_deps.sh
	[ -x $(BUILD)/tools/bin/s3s-fs ] || $(CARGO) install -q s3s-fs@0.14.1 --features binary --root $(BUILD)/tools || true
	S3S_FS=$(CURDIR)/$(BUILD)/tools/bin/s3s-fs python3 bench/run.py

clean:
	rm -rf $(BUILD)
	$(CARGO) clean
