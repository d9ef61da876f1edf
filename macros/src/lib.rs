//! `#[export]`: what every exported `nc_*` function of nczarr-rs does before its own body,
//! written once instead of in each export. Every export has one shape: the attribute says how
//! the call is routed and traced, the body only converts arguments and calls the core.
//!
//! * **Routing** (passthrough.md §5), chosen by the function's parameters or by an option:
//!   - by ncid, automatically: a C function whose first parameter is an ncid (`ncid`,
//!     `ncid_in`, ...) and returns `c_int` first asks the registry whether the ncid belongs to
//!     the real netcdf-c behind the preload library; if so the call goes there unchanged.
//!     `then = f`: the real status passes through `f(ncid, status)` (bookkeeping after a
//!     forwarded close).
//!   - `path = create` / `path = open`: by dataset name, the first parameter. A name that is not
//!     ours goes to the real library, and the ncid it hands back (through the last parameter,
//!     when it is `ncidp`) is claimed for it. `forward(a, b)` names the arguments passed on
//!     when they are not exactly the function's own.
//!   - `memory = create` / `memory = open`: memory images always belong to the real library.
//!   - `ncids(a, b), mixed = f`: two ncids; both the real library's: forwarded; both ours: the
//!     body; one of each: `f` with the same arguments.
//!   - `by_hand`: no routing (the body does it, or the call has nothing to route).
//!   - `name = "nc_x"`: the C name for routing and tracing, when the function is a helper of
//!     that export rather than the export itself.
//! * **Tracing and the panic boundary.** `trace(a, b)` runs the body — a block that evaluates
//!   to `Result<()>` — inside `ffi::call`: a panic becomes NC_EINTERNAL, an error its NC_*
//!   code, and with `NCTRACING` set the call is printed with the named arguments. Without
//!   `trace`, the body runs as written inside `catch_unwind`: a panic returns NC_EINTERNAL
//!   from netCDF calls, null from pointer-returning ones, nothing from `()` ones, and
//!   `on_panic = <value>` for anything else (a tool's boolean or length).
//!
//! The attribute goes above `#[unsafe(no_mangle)]`, which stays in the source so that
//! cbindgen, which reads the source and not the expansion, puts the function in netcdf.h.

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Token, Type, parse_macro_input};

/// How a name-routed call treats the ncid the real library hands back.
#[derive(Clone, Copy, PartialEq)]
enum Opening {
    Create,
    Open,
}

#[derive(Default)]
struct Options {
    by_hand: bool,
    trace: Option<Vec<Ident>>,
    on_panic: Option<syn::Expr>,
    name: Option<String>,
    then: Option<syn::Path>,
    path: Option<Opening>,
    memory: Option<Opening>,
    forward: Option<Vec<Ident>>,
    ncids: Option<(Ident, Ident)>,
    mixed: Option<syn::Path>,
}

fn idents(input: ParseStream) -> syn::Result<Vec<Ident>> {
    let content;
    syn::parenthesized!(content in input);
    let args: Punctuated<Ident, Token![,]> = content.parse_terminated(Ident::parse, Token![,])?;
    Ok(args.into_iter().collect())
}

fn opening(input: ParseStream) -> syn::Result<Opening> {
    input.parse::<Token![=]>()?;
    let word: Ident = input.parse()?;
    match word.to_string().as_str() {
        "create" => Ok(Opening::Create),
        "open" => Ok(Opening::Open),
        _ => Err(syn::Error::new(word.span(), "expected `create` or `open`")),
    }
}

impl Parse for Options {
    fn parse(input: ParseStream) -> syn::Result<Options> {
        let mut opts = Options::default();
        while !input.is_empty() {
            let word: Ident = input.parse()?;
            match word.to_string().as_str() {
                "by_hand" => opts.by_hand = true,
                "on_panic" => {
                    input.parse::<Token![=]>()?;
                    opts.on_panic = Some(input.parse()?);
                }
                "trace" => opts.trace = Some(idents(input)?),
                "forward" => opts.forward = Some(idents(input)?),
                "name" => {
                    input.parse::<Token![=]>()?;
                    opts.name = Some(input.parse::<syn::LitStr>()?.value());
                }
                "then" => {
                    input.parse::<Token![=]>()?;
                    opts.then = Some(input.parse()?);
                }
                "mixed" => {
                    input.parse::<Token![=]>()?;
                    opts.mixed = Some(input.parse()?);
                }
                "path" => opts.path = Some(opening(input)?),
                "memory" => opts.memory = Some(opening(input)?),
                "ncids" => match idents(input)?.as_slice() {
                    [a, b] => opts.ncids = Some((a.clone(), b.clone())),
                    _ => return Err(syn::Error::new(word.span(), "ncids(a, b) takes two parameters")),
                },
                other => return Err(syn::Error::new(word.span(), format!("unknown export option `{other}`"))),
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(opts)
    }
}

fn returns_c_int(ret: &ReturnType) -> bool {
    matches!(ret, ReturnType::Type(_, t) if matches!(&**t, Type::Path(p) if p.path.is_ident("c_int")))
}

/// What the function returns when its body panics: nothing, a null pointer, NC_EINTERNAL for
/// netCDF calls, or what `on_panic` says (required for anything else: a tool's boolean or
/// length has no safe default).
fn panic_value(name: &str, ret: &ReturnType, on_panic: Option<&syn::Expr>) -> syn::Result<proc_macro2::TokenStream> {
    if let Some(e) = on_panic {
        return Ok(quote!(#e));
    }
    match ret {
        ReturnType::Default => Ok(quote!(())),
        ReturnType::Type(_, t) => match &**t {
            Type::Ptr(p) if p.mutability.is_some() => Ok(quote!(::std::ptr::null_mut())),
            Type::Ptr(_) => Ok(quote!(::std::ptr::null())),
            _ if returns_c_int(ret) && (name.starts_with("nc_") || name.starts_with("nczarr_")) => {
                Ok(quote!(crate::ffi::consts::NC_EINTERNAL))
            }
            _ => Err(syn::Error::new_spanned(t, "#[export]: say what a panic returns with on_panic = <value>")),
        },
    }
}

/// The call of the real library's function `c_name` with `args` (of `params`' types).
fn real_call(c_name: &str, args: &[Ident], params: &[(Ident, Type)]) -> syn::Result<proc_macro2::TokenStream> {
    let symbol = Ident::new(c_name, proc_macro2::Span::call_site());
    let mut types = Vec::new();
    for a in args {
        match params.iter().find(|(p, _)| p == a) {
            Some((_, t)) => types.push(t.clone()),
            None => return Err(syn::Error::new(a.span(), format!("#[export]: `{a}` is not a parameter"))),
        }
    }
    Ok(quote!(crate::ffi::route::real_call!(#symbol(#(#args),*): (#(#types),*)).unwrap_or_else(|missing| missing)))
}

/// The routing prologue the options and the parameters ask for (empty: none).
fn route(opts: &Options, c_name: &str, func: &ItemFn, params: &[(Ident, Type)]) -> syn::Result<proc_macro2::TokenStream> {
    let all: Vec<Ident> = params.iter().map(|(n, _)| n.clone()).collect();
    let forwarded = opts.forward.clone().unwrap_or_else(|| all.clone());
    let claim_ptr = params.last().map(|(n, _)| n.clone()).filter(|n| n.to_string().ends_with("ncidp"));
    if let Some(kind) = opts.path.or(opts.memory) {
        let call = real_call(c_name, &forwarded, params)?;
        let creating = kind == Opening::Create;
        // The name judged is the one the real library would be given.
        let first = forwarded.first().ok_or_else(|| syn::Error::new_spanned(&func.sig, "path routing needs a name parameter"))?;
        let not_ours = match opts.path {
            // SAFETY: the export's own contract: a dataset name is NULL or NUL-terminated.
            Some(_) => quote!(&& !unsafe { crate::ffi::route::path_ptr_is_ours(#first, #creating) }),
            None => quote!(),
        };
        let claim = match &claim_ptr {
            // SAFETY: the ncid out-pointer the caller passed (checked for NULL there).
            Some(p) => quote!(let status = unsafe { crate::ffi::route::claim_real(status, #p, #creating) };),
            None => quote!(),
        };
        return Ok(quote! {
            if crate::ffi::route::passthrough() #not_ours && crate::ffi::route::real_available_retry() {
                let status = #call;
                #claim
                return status;
            }
        });
    }
    if let Some((a, b)) = &opts.ncids {
        let call = real_call(c_name, &forwarded, params)?;
        let mixed = opts.mixed.as_ref().ok_or_else(|| syn::Error::new_spanned(&func.sig, "ncids(..) needs mixed = <fn>"))?;
        return Ok(quote! {
            match (crate::ffi::route::is_foreign(#a), crate::ffi::route::is_foreign(#b)) {
                (true, true) => {
                    if crate::trace::enabled(2) {
                        crate::ffi::route::trace_forward(#c_name, #a);
                    }
                    return #call;
                }
                (false, false) => {}
                _ => return #mixed(#(#all),*),
            }
        });
    }
    let by_ncid = !opts.by_hand
        && (c_name.starts_with("nc_") || c_name.starts_with("nczarr_"))
        && returns_c_int(&func.sig.output)
        && params.first().is_some_and(|(p, _)| p.to_string().contains("ncid"));
    if !by_ncid {
        return Ok(quote!());
    }
    let ncid = &params[0].0;
    let call = real_call(c_name, &forwarded, params)?;
    let after = match &opts.then {
        Some(f) => quote!(#f(#ncid, status)),
        None => quote!(status),
    };
    Ok(quote! {
        if crate::registry::is_foreign(#ncid) {
            if crate::trace::enabled(2) {
                crate::ffi::route::trace_forward(#c_name, #ncid);
            }
            let status = #call;
            return #after;
        }
    })
}

#[proc_macro_attribute]
pub fn export(attr: TokenStream, item: TokenStream) -> TokenStream {
    let opts = parse_macro_input!(attr as Options);
    let mut func = parse_macro_input!(item as ItemFn);
    let c_name = opts.name.clone().unwrap_or_else(|| func.sig.ident.to_string());

    let params: Vec<(Ident, Type)> = func
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) => match &*pt.pat {
                Pat::Ident(pi) => Some((pi.ident.clone(), (*pt.ty).clone())),
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect();

    let route = match route(&opts, &c_name, &func, &params) {
        Ok(r) => r,
        Err(e) => return e.to_compile_error().into(),
    };
    let body = &func.block;
    let new_body = match &opts.trace {
        Some(args) => quote! {{
            #route
            crate::ffi::call(
                #c_name,
                || {
                    let parts: ::std::vec::Vec<::std::string::String> =
                        ::std::vec![#(::std::format!("{}={:?}", stringify!(#args), #args)),*];
                    parts.join(", ")
                },
                || #body,
            )
        }},
        // The panic boundary: no panic crosses into C, whatever the function returns.
        None => {
            let on_panic = match panic_value(&c_name, &func.sig.output, opts.on_panic.as_ref()) {
                Ok(v) => v,
                Err(e) => return e.to_compile_error().into(),
            };
            quote! {{
                #route
                match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| #body)) {
                    Ok(value) => value,
                    Err(_) => #on_panic,
                }
            }}
        }
    };
    func.block = match syn::parse2(new_body) {
        Ok(b) => Box::new(b),
        Err(e) => return e.to_compile_error().into(),
    };
    quote!(#func).into()
}
