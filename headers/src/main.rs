//! `make headers`: renders the public headers from the C ABI crate's sources with cbindgen,
//! laid out the way netcdf-c's headers are (consumers grep them: netCDF4-python looks for
//! lines starting `nc_rename_grp`, `EXTERNL int nc_rc_set`, ...). The emulated netcdf-c
//! version and the filter ids come from the core, where they are defined. The headers are
//! written into `include/` and committed; CI regenerates them and fails on any difference.

use std::collections::BTreeMap;
use std::path::Path;

const CXX_OPEN: &str = "#if defined(__cplusplus)\nextern \"C\" {\n#endif\n";
const CXX_CLOSE: &str = "#if defined(__cplusplus)\n}\n#endif\n";

/// Functions declared in netcdf_filter.h, netcdf_mem.h and netcdf_aux.h (netcdf-c's split).
const FILTER_FNS: &[&str] = &[
    "nc_inq_var_filter_ids",
    "nc_inq_var_filter_info",
    "nc_inq_filter_avail",
    "nc_def_var_bzip2",
    "nc_inq_var_bzip2",
    "nc_def_var_zstandard",
    "nc_inq_var_zstandard",
    "nc_def_var_blosc",
    "nc_inq_var_blosc",
    "nc_plugin_path_ndirs",
    "nc_plugin_path_get",
    "nc_plugin_path_set",
];
const MEM_FNS: &[&str] = &["nc_open_mem", "nc_create_mem", "nc_open_memio", "nc_close_memio"];
const MEM_TYPES: &[&str] = &["NC_memio"];
const FILTER_TYPES: &[&str] = &["NC_H5_Filterspec", "NCPluginList"];

/// netcdf-c internals exported for Debian's tools and libnetcdff: in no public header.
fn is_internal(name: &str) -> bool {
    matches!(
        name,
        "NC_shellUnescape"
            | "NCpathcanonical"
            | "nc__testurl"
            | "NC__testurl"
            | "ncuriparse"
            | "ncurifree"
            | "ncuribuild"
            | "ncuriappendfragmentkey"
            | "nclistnew"
            | "nclistpush"
            | "nclistremove"
            | "nclistfree"
            | "ncsetlogging"
            | "ncsetloglevel"
            | "strlcat"
            | "nc_utf8_to_utf16"
            | "cdParseRelunits"
            | "cdRel2Iso"
            | "cdSetErrOpts"
            | "cdChar2Comp"
            | "Cdh2e"
            | "NCURI"
            | "NClist"
            | "cdCompTime"
            | "CdTime"
    ) || name.ends_with("_ints")
        || name.ends_with("_par_fortran")
}

/// Functions netcdf-c declares on one line (`EXTERNL int nc_rc_set(...)`); the rest get the
/// return type on its own line and the name at column 0.
const ONE_LINE: &[&str] = &["nc_rc_set", "nc_rc_get"];

enum Item {
    Define(String),
    Type(String, String),
    Function(String, String),
}

fn item_name(decl: &str) -> String {
    let head = decl.split('(').next().unwrap_or("");
    head.trim().rsplit([' ', '*']).next().unwrap_or("").to_string()
}

fn parse(generated: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut lines = generated.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("#define ") {
            // netcdf-c parenthesises every non-trivial macro value; so do we.
            let (name, value) = rest.split_once(' ').unwrap_or((rest, ""));
            let simple = value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            let value = if simple || (value.starts_with('(') && value.ends_with(')') && !value[1..].contains('(')) {
                value.to_string()
            } else {
                format!("({value})")
            };
            items.push(Item::Define(format!("#define {name} {value}")));
        } else if t.starts_with("typedef") {
            let mut block = vec![line.to_string()];
            let mut depth = t.matches('{').count() as i32 - t.matches('}').count() as i32;
            while depth > 0 || !block.last().unwrap().trim_end().ends_with(';') {
                let Some(next) = lines.next() else { break };
                depth += next.matches('{').count() as i32 - next.matches('}').count() as i32;
                block.push(next.to_string());
            }
            let last = block.last().unwrap().trim().trim_end_matches(';').trim_start_matches('}').trim().to_string();
            let name = if last.is_empty() { item_name(&block[0]) } else { last.rsplit(' ').next().unwrap_or("").to_string() };
            // Tagged structs, as netcdf-c declares them (`typedef struct NC_memio {...} NC_memio;`).
            let mut text = block.join("\n");
            if text.starts_with("typedef struct {") {
                text = text.replacen("typedef struct {", &format!("typedef struct {name} {{"), 1);
                text = text.replace(&format!("}} struct {name};"), &format!("}} {name};"));
            }
            items.push(Item::Type(name, text));
        } else if t.ends_with(");") && t.contains('(') && !t.starts_with('#') && !t.starts_with("//") {
            items.push(Item::Function(item_name(t), t.to_string()));
        } else if t.starts_with("extern ") && t.ends_with(';') && !t.contains('(') {
            items.push(Item::Function(item_name(t), format!("EXTERNL {}", &t[7..])));
        }
    }
    items
}

fn netcdf_style(decl: &str, one_line: bool) -> String {
    if decl.starts_with("EXTERNL") {
        return decl.to_string();
    }
    let name = item_name(decl);
    let pos = decl.find(&format!("{name}(")).unwrap_or(0);
    let (ret, rest) = decl.split_at(pos);
    if one_line { format!("EXTERNL {}{}", ret, rest) } else { format!("EXTERNL {}\n{}", ret.trim_end(), rest) }
}

/// `--check`: compare with the committed headers instead of writing them.
static CHECK_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static DIFFERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn write_if_changed(path: &Path, text: &str) {
    use std::sync::atomic::Ordering::Relaxed;
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return;
    }
    if CHECK_ONLY.load(Relaxed) {
        DIFFERS.store(true, Relaxed);
        eprintln!("{}: differs from what the sources generate (run `make headers` and commit it)", path.display());
    } else {
        std::fs::write(path, text).expect("write header");
        println!("{}: written", path.display());
    }
}

fn main() {
    CHECK_ONLY.store(std::env::args().any(|a| a == "--check"), std::sync::atomic::Ordering::Relaxed);
    render();
    if DIFFERS.load(std::sync::atomic::Ordering::Relaxed) {
        std::process::exit(1);
    }
}

/// The items cbindgen made, by the header each goes to.
#[derive(Default)]
struct Sorted {
    main_defs: Vec<String>,
    main_types: Vec<String>,
    main_fns: Vec<String>,
    /// Side headers by name: their types and their declarations.
    sections: BTreeMap<&'static str, (Vec<String>, Vec<String>)>,
}

const BANNER: &str = "/* Generated by `make headers` from the Rust sources (cbindgen); do not edit. */\n";

fn render() {
    // The C ABI crate is the workspace root, this tool's parent folder.
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let config = cbindgen::Config::from_file(Path::new(&crate_dir).join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new().with_crate(&crate_dir).with_config(config).generate().expect("cbindgen");
    let mut raw = Vec::new();
    bindings.write(&mut raw);
    let generated = String::from_utf8(raw).expect("utf8");
    let mut sorted = sort(&generated);
    let include = Path::new(&crate_dir).join("include");
    std::fs::create_dir_all(&include).expect("include dir");
    write_if_changed(&include.join("netcdf.h"), &netcdf_h(&sorted));
    write_if_changed(&include.join("netcdf_filter.h"), &filter_h(sorted.sections.remove("filter").unwrap_or_default()));
    write_side_headers(&include, &mut sorted.sections);
    write_if_changed(&include.join("netcdf_meta.h"), &meta_h());
}

/// Sorts cbindgen's items into netcdf.h's and the side headers'.
fn sort(generated: &str) -> Sorted {
    let mut out = Sorted::default();
    let Sorted { main_defs, main_types, main_fns, sections } = &mut out;
    for item in parse(generated) {
        match item {
            Item::Define(d) => main_defs.push(d),
            Item::Type(name, text) => {
                if is_internal(&name) {
                    continue;
                }
                if MEM_TYPES.contains(&name.as_str()) {
                    sections.entry("mem").or_default().0.push(text);
                } else if FILTER_TYPES.contains(&name.as_str()) {
                    sections.entry("filter").or_default().0.push(text);
                } else {
                    main_types.push(text);
                }
            }
            Item::Function(name, decl) => {
                if is_internal(&name) {
                    continue;
                }
                if FILTER_FNS.contains(&name.as_str()) {
                    sections.entry("filter").or_default().1.push(netcdf_style(&decl, true));
                } else if MEM_FNS.contains(&name.as_str()) {
                    sections.entry("mem").or_default().1.push(netcdf_style(&decl, true));
                } else if name.starts_with("nczarr_") {
                    sections.entry("nczarr").or_default().1.push(netcdf_style(&decl, true));
                } else if name.starts_with("ncaux_") {
                    sections.entry("aux").or_default().1.push(netcdf_style(&decl, true));
                } else {
                    main_fns.push(netcdf_style(&decl, ONE_LINE.contains(&name.as_str())));
                }
            }
        }
    }
    out
}

/// netcdf.h: netcdf-c's own opening, the types, the constants, the declarations.
fn netcdf_h(sorted: &Sorted) -> String {
    let Sorted { main_defs, main_types, main_fns, .. } = sorted;
    let mut h = String::new();
    h.push_str(BANNER);
    h.push_str("#ifndef _NETCDF_\n#define _NETCDF_\n\n#include <stddef.h>\n#include <errno.h>\n\n");
    h.push_str("#if defined(DLL_NETCDF)\n#  define MSC_EXTRA __declspec(dllimport)\n#else\n#  define MSC_EXTRA\n#endif\n");
    h.push_str("#define EXTERNL MSC_EXTRA extern\n\n");
    for t in main_types {
        h.push_str(t);
        h.push_str("\n\n");
    }
    for d in main_defs {
        h.push_str(d);
        h.push('\n');
    }
    h.push_str(
        "\n#define NC_FillValue \"_FillValue\"\n#define _FillValue \"_FillValue\"\n\
#define NC_QUANTIZE_BITGROOM_ATT_NAME \"_QuantizeBitGroomNumberOfSignificantDigits\"\n\
#define NC_QUANTIZE_GRANULARBR_ATT_NAME \"_QuantizeGranularBitRoundNumberOfSignificantDigits\"\n\
#define NC_QUANTIZE_BITROUND_ATT_NAME \"_QuantizeBitRoundNumberOfSignificantBits\"\n\
#define DIM_WITHOUT_VARIABLE \"This is a netCDF dimension but not a netCDF variable.\"\n\
#define NC_COMPOUND_OFFSET(S,M) (offsetof(S,M))\n\
#define NC_ISSYSERR(err) ((err) > 0)\n\
typedef int nclong;\n\
typedef struct NC_Dispatch NC_Dispatch;\n\n",
    );
    h.push_str(CXX_OPEN);
    h.push('\n');
    for f in main_fns {
        h.push_str(f);
        h.push_str("\n\n");
    }
    h.push_str("EXTERNL int ncerr;\nEXTERNL int ncopts;\n\n");
    h.push_str("EXTERNL void\nnc_advise(const char *cdf_routine_name, int err, const char *fmt,...);\n\n");
    h.push_str(CXX_CLOSE);
    h.push_str("\n#endif /* _NETCDF_ */\n");

    h
}

/// netcdf_filter.h: HDF5's filter ids and szip masks, netcdf-c's blosc enums, then the types
/// and declarations.
fn filter_h((ftypes, ffns): (Vec<String>, Vec<String>)) -> String {
    let mut f = String::new();
    f.push_str(BANNER);
    f.push_str("#ifndef NETCDF_FILTER_H\n#define NETCDF_FILTER_H 1\n\n");
    for (name, id) in nczarr_core::codec::FILTER_IDS {
        f.push_str(&format!("#ifndef H5Z_FILTER_{name}\n#define H5Z_FILTER_{name} {id}\n#endif\n"));
    }
    for (name, value) in [
        ("H5_SZIP_ALLOW_K13_OPTION_MASK", "1"),
        ("H5_SZIP_CHIP_OPTION_MASK", "2"),
        ("H5_SZIP_EC_OPTION_MASK", "4"),
        ("H5_SZIP_LSB_OPTION_MASK", "8"),
        ("H5_SZIP_MSB_OPTION_MASK", "16"),
        ("H5_SZIP_NN_OPTION_MASK", "32"),
        ("H5_SZIP_MAX_PIXELS_PER_BLOCK", "32"),
        ("H5_SZIP_RAW_OPTION_MASK", "128"),
        ("H5_SZIP_ALL_MASKS", "(H5_SZIP_CHIP_OPTION_MASK|H5_SZIP_EC_OPTION_MASK|H5_SZIP_NN_OPTION_MASK)"),
        ("NC_MAX_PIXELS_PER_BLOCK", "32"),
    ] {
        f.push_str(&format!("#ifndef {name}\n#define {name} {value}\n#endif\n"));
    }
    f.push_str(
        "\n#define NC_NOZSTANDARD 0\n\nenum BLOSC_SHUFFLE {\nBLOSC_NOSHUFFLE = 0,\nBLOSC_SHUFFLE = 1,\nBLOSC_BITSHUFFLE = 2\n};\n\n",
    );
    f.push_str("enum BLOSC_SUBCOMPRESSORS {BLOSC_LZ=0, BLOSC_LZ4=1, BLOSC_LZ4HC=2, BLOSC_SNAPPY=3, BLOSC_ZLIB=4, BLOSC_ZSTD=5};\n\n");

    side_header(f, &ftypes, &ffns, "NETCDF_FILTER_H")
}

/// netcdf_mem.h, netcdf_aux.h and netcdf_nczarr.h.
fn write_side_headers(include: &Path, sections: &mut BTreeMap<&'static str, (Vec<String>, Vec<String>)>) {
    let banner = BANNER;
    let (mtypes, mfns) = sections.remove("mem").unwrap_or_default();
    let m = format!("{banner}#ifndef NETCDF_MEM_H\n#define NETCDF_MEM_H 1\n\n#define NC_MEMIO_LOCKED 1\n\n");
    write_if_changed(&include.join("netcdf_mem.h"), &side_header(m, &mtypes, &mfns, "NETCDF_MEM_H"));

    let (_, afns) = sections.remove("aux").unwrap_or_default();
    let a = format!(
        "{banner}#ifndef NCAUX_H\n#define NCAUX_H\n\n#define NCAUX_ALIGN_C 0\n#define NCAUX_ALIGN_UNIFORM 1\n\nstruct NC_H5_Filterspec;\nstruct NCPluginList;\n\n"
    );
    write_if_changed(&include.join("netcdf_aux.h"), &side_header(a, &[], &afns, "NCAUX_H"));

    // Our extensions live in their own header so netcdf.h squats on no name netcdf-c might add.
    // It includes netcdf.h (which defines EXTERNL unconditionally, as netcdf-c's does), so the
    // two can be included in either order.
    let (_, zfns) = sections.remove("nczarr").unwrap_or_default();
    let z = format!("{banner}#ifndef NETCDF_NCZARR_H\n#define NETCDF_NCZARR_H 1\n\n#include <stddef.h>\n#include <netcdf.h>\n\n");
    write_if_changed(&include.join("netcdf_nczarr.h"), &side_header(z, &[], &zfns, "NETCDF_NCZARR_H"));
}

/// netcdf_meta.h: the version we emulate and what this build has.
fn meta_h() -> String {
    let banner = BANNER;
    let (maj, min, pat) = (nczarr_core::nc::version::MAJOR, nczarr_core::nc::version::MINOR, nczarr_core::nc::version::PATCH);
    let meta = format!(
        "{banner}#ifndef NETCDF_META_H\n#define NETCDF_META_H\n\n\
#define NC_VERSION_MAJOR {maj}\n#define NC_VERSION_MINOR {min}\n#define NC_VERSION_PATCH {pat}\n\
#define NC_VERSION_NOTE \"\"\n#define NC_VERSION \"{maj}.{min}.{pat}\"\n\n\
#define NC_HAS_NC2 1\n#define NC_HAS_NC4 1\n#define NC_HAS_HDF4 0\n#define NC_HAS_HDF5 0\n\
#define NC_HAS_SZIP 0\n#define NC_HAS_SZIP_WRITE 0\n#define NC_HAS_DAP2 0\n#define NC_HAS_DAP4 0\n\
#define NC_HAS_BYTERANGE 0\n#define NC_HAS_DISKLESS 0\n#define NC_HAS_MMAP 0\n#define NC_HAS_JNA 0\n\
#define NC_HAS_PNETCDF 0\n#define NC_HAS_PARALLEL4 0\n#define NC_HAS_PARALLEL 0\n#define NC_HAS_CDF5 0\n\
#define NC_HAS_ERANGE_FILL 0\n#define NC_RELAX_COORD_BOUND 1\n#define NC_DISPATCH_VERSION 5\n\
#define NC_HAS_PAR_FILTERS 0\n#define NC_HAS_NCZARR 1\n#define NC_HAS_MULTIFILTERS 1\n\
#define NC_HAS_LOGGING 0\n#define NC_HAS_QUANTIZE 1\n#define NC_HAS_ZSTD 1\n#define NC_HAS_BENCHMARKS 0\n\
#define NC_HAS_BLOSC 1\n#define NC_HAS_BZ2 1\n#define NC_HAS_S3 1\n#define NC_HAS_S3_AWS 0\n\
#define NC_HAS_S3_INTERNAL 1\n#define NC_HAS_HDF5_ROS3 0\n\n#endif\n"
    );
    meta
}

/// A header beside netcdf.h: its opening (guard and definitions), the types, then the
/// declarations inside the C++ guard, then the closing `#endif`.
fn side_header(mut h: String, types: &[String], fns: &[String], guard: &str) -> String {
    for t in types {
        h.push_str(t);
        h.push_str("\n\n");
    }
    h.push_str(CXX_OPEN);
    for d in fns {
        h.push_str(d);
        h.push('\n');
    }
    h.push_str(CXX_CLOSE);
    h.push_str(&format!("\n#endif /* {guard} */\n"));
    h
}
