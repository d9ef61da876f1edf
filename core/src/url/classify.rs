//! The front door: whose a dataset name is, judged once. `classify` parses the name once and
//! probes a local path at most once; every later step of an open or create (the S3 object
//! hand-off, the real library's forward, our store factory) takes its answer instead of
//! judging the name again.

use super::object::{ObjectName, object_name};
use super::{OpenSpec, parse, parse_fragment, probe};
use crate::error::{Error, Result};

/// What an open or create of a name should do.
#[derive(Debug, Clone)]
pub struct Classified {
    /// The name as given.
    pub name: String,
    /// The name for the real library: the words only we know (`cfa`/`nocfa` in the mode,
    /// `cfa=`, `cfa_names=`) taken out, and a `file://` URL left without a fragment made a path.
    pub real_name: String,
    /// A netCDF file stored as one S3 object this name may be (an open probes it; one that
    /// holds no netCDF file leaves the name to `zarr`).
    pub object: std::result::Result<Option<ObjectName>, Error>,
    /// The name as one of our Zarr datasets: `Ok(Some)` ours (a probed local path has its
    /// driver set, so the store factory does not probe again), `Err` ours but its fragment is
    /// refused, `Ok(None)` not ours.
    pub zarr: std::result::Result<Option<OpenSpec>, Error>,
    /// A netCDF file on a plain web server: `http(s)://…#mode=bytes` naming no S3 object (its
    /// URL without the fragment), read by ranged GETs.
    pub web_object: Option<String>,
    /// Aggregation: the name asks for an aggregated dataset to be written (`cfa` in its mode,
    /// `cfa=`), or turns reading masters as aggregations off (`nocfa`).
    pub writes_aggregation: bool,
    pub no_aggregation: bool,
}

impl Classified {
    pub fn is_ours(&self) -> bool {
        !matches!(self.zarr, Ok(None))
    }
}

/// Judges `name` for an open (`creating` false) or a create.
pub fn classify(name: &str, creating: bool) -> Classified {
    let words = mode_words(name);
    let zarr = match parse(name) {
        Ok(Some(spec)) if spec.is_explicit() || spec.driver.is_some() => Ok(Some(spec)),
        // Without a URL naming Zarr nothing chooses Zarr on create (netcdf-c's dispatcher
        // never does); on open, a path holding a Zarr store is ours.
        Ok(Some(mut spec)) if !creating => match probe(&spec.path) {
            Some(driver) => {
                spec.driver = Some(driver);
                Ok(Some(spec))
            }
            None => Ok(None),
        },
        Ok(_) => Ok(None),
        // A URL naming Zarr whose fragment we reject is still ours: we report the error.
        Err(e) => Err(e),
    };
    let object = object_name(name, creating);
    let lower = name.to_ascii_lowercase();
    let web_object = (matches!(object, Ok(None))
        && matches!(zarr, Ok(None))
        && words.iter().any(|w| w == "bytes")
        && (lower.starts_with("http://") || lower.starts_with("https://")))
    .then(|| name.split('#').next().unwrap_or(name).to_string());
    Classified {
        name: name.to_string(),
        real_name: without_our_words(name).unwrap_or_else(|| name.to_string()),
        object,
        web_object,
        zarr,
        writes_aggregation: words.iter().any(|w| w == "cfa") || fragment_param(name, "cfa").is_some(),
        no_aggregation: words.iter().any(|w| w == "nocfa"),
    }
}

/// The lower-cased words of the name's `mode=`.
fn mode_words(name: &str) -> Vec<String> {
    fragment_param(name, "mode").map(|m| m.split(',').map(|w| w.trim().to_ascii_lowercase()).collect()).unwrap_or_default()
}

fn fragment_param(name: &str, key: &str) -> Option<String> {
    name.split_once('#').and_then(|(_, f)| parse_fragment(f).get(key).cloned())
}

/// The name without the words only we know (`nocfa`, `cfa` in its mode, a `cfa=` version,
/// `cfa_names=`), for the real library; `None` when the name has none.
pub fn without_our_words(name: &str) -> Option<String> {
    let (base, fragment) = name.split_once('#')?;
    if !fragment.to_ascii_lowercase().contains("cfa") {
        return None;
    }
    let ours = |w: &str| w.eq_ignore_ascii_case("nocfa") || w.eq_ignore_ascii_case("cfa");
    let kept: Vec<String> = fragment
        .split('&')
        .filter_map(|pair| match pair.split_once('=') {
            Some((k, v)) if k.eq_ignore_ascii_case("mode") => {
                let words: Vec<&str> = v.split(',').filter(|w| !ours(w) && !w.is_empty()).collect();
                (!words.is_empty()).then(|| format!("{k}={}", words.join(",")))
            }
            Some((k, _)) if k.eq_ignore_ascii_case("cfa") || k.eq_ignore_ascii_case("cfa_names") => None,
            _ if ours(pair) || pair.is_empty() => None,
            _ => Some(pair.to_string()),
        })
        .collect();
    // A `file://` URL left without a fragment is a plain path to the real library.
    Some(match (kept.is_empty(), base.strip_prefix("file://")) {
        (true, Some(path)) => path.strip_prefix("localhost").unwrap_or(path).to_string(),
        (true, None) => base.to_string(),
        (false, _) => format!("{base}#{}", kept.join("&")),
    })
}

/// The spec of a name `classify` judged ours, or why it cannot be opened or created: a name
/// that is not ours is NC_ENOTBUILT on create, errno 2 when nothing is there, NC_ENOTNC
/// otherwise (`hint` says what to do about it).
pub fn spec_of(class: &Classified, creating: bool, hint: &str) -> Result<OpenSpec> {
    use crate::error::{Kind, err};
    let name = &class.name;
    match &class.zarr {
        Ok(Some(spec)) => Ok(spec.clone()),
        Err(e) => Err(e.clone()),
        Ok(None) if creating => err(Kind::NotBuilt, format!("{name}: only Zarr datasets (URLs with mode=nczarr/zarr) can be created")),
        Ok(None) => {
            let path = match parse(name) {
                Ok(Some(spec)) => spec.path,
                _ => std::path::PathBuf::from(name.split('#').next().unwrap_or(name)),
            };
            if path.exists() {
                err(Kind::NotNetcdf, format!("{name}: not a Zarr dataset{hint}"))
            } else {
                err(Kind::Errno(libc::ENOENT), format!("{name}: no such file"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_judgement_per_name() {
        let c = classify("file:///d/x.nca#mode=nocfa", false);
        assert_eq!((c.real_name.as_str(), c.no_aggregation, c.is_ours()), ("/d/x.nca", true, false));
        let c = classify("http://h/b/x.nca#mode=bytes,nocfa", false);
        assert_eq!(c.real_name, "http://h/b/x.nca#mode=bytes");
        assert!(matches!(c.object, Ok(Some(_))));
        assert_eq!(classify("x.nca#nocfa", false).real_name, "x.nca");
        assert_eq!(classify("/d/x.nca", false).real_name, "/d/x.nca");
        let c = classify("file:///d/x.nca#mode=cfa&cfa=0.5", true);
        assert_eq!((c.real_name.as_str(), c.writes_aggregation), ("/d/x.nca", true));
        assert_eq!(classify("s3://b/x.nca#mode=cfa,s3", true).real_name, "s3://b/x.nca#mode=s3");
        assert!(classify("file:///tmp/x#mode=nczarr,file", false).is_ours());
        assert!(classify("file:///tmp/x#mode=nczarr,bogus", false).zarr.is_err(), "ours, refused");
        assert!(!classify("/nonexistent/file.nc", false).is_ours());
        let dir = std::env::temp_dir().join(format!("nczarr-classify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".zgroup"), b"{\"zarr_format\":2}").unwrap();
        let c = classify(dir.to_str().unwrap(), false);
        assert_eq!(c.zarr.as_ref().unwrap().as_ref().unwrap().driver, Some(super::super::Driver::File), "probed once, kept");
        assert!(!classify(dir.to_str().unwrap(), true).is_ours(), "never Zarr by inference on create");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
