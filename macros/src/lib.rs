//! `#[export]`: what every exported `nc_*` function of nczarr-rs does before its own body,
//! written once instead of in each export.
//!
//! * **Routing.** A C function whose first parameter is an ncid (`ncid`, `ncid_in`, ...) and
//!   returns `c_int` first asks the registry whether the ncid belongs to the real netcdf-c
//!   behind the preload library; if so the call goes there unchanged (passthrough.md §5).
//!   `#[export(by_hand)]` leaves routing to the body (two-ncid calls, open/close).
//! * **Tracing and the panic boundary.** `#[export(trace(a, b))]` runs the body — a block
//!   that evaluates to `Result<()>` — inside `ffi::call`: a panic becomes NC_EINTERNAL, an
//!   error its NC_* code, and with `NCTRACING` set the call is printed with the named
//!   arguments. Without `trace`, the body runs as written inside `catch_unwind`: a panic
//!   returns NC_EINTERNAL from netCDF calls, null from pointer-returning ones, nothing from
//!   `()` ones, and `on_panic = <value>` for anything else (a tool's boolean or length).
//!
//! The attribute goes above `#[unsafe(no_mangle)]`, which stays in the source so that
//! cbindgen, which reads the source and not the expansion, puts the function in netcdf.h.

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Token, Type, parse_macro_input};

#[derive(Default)]
struct Options {
    by_hand: bool,
    trace: Option<Vec<Ident>>,
    on_panic: Option<syn::Expr>,
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
                "trace" => {
                    let content;
                    syn::parenthesized!(content in input);
                    let args: Punctuated<Ident, Token![,]> = content.parse_terminated(Ident::parse, Token![,])?;
                    opts.trace = Some(args.into_iter().collect());
                }
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

#[proc_macro_attribute]
pub fn export(attr: TokenStream, item: TokenStream) -> TokenStream {
    let opts = parse_macro_input!(attr as Options);
    let mut func = parse_macro_input!(item as ItemFn);
    let name = func.sig.ident.clone();
    let name_str = name.to_string();

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

    let routed = !opts.by_hand
        && (name_str.starts_with("nc_") || name_str.starts_with("nczarr_"))
        && returns_c_int(&func.sig.output)
        && params.first().is_some_and(|(p, _)| p.to_string().contains("ncid"));
    let route = if routed {
        let ncid = &params[0].0;
        let names: Vec<&Ident> = params.iter().map(|(n, _)| n).collect();
        let types: Vec<&Type> = params.iter().map(|(_, t)| t).collect();
        quote! {
            if crate::registry::is_foreign(#ncid) {
                if crate::trace::enabled(2) {
                    crate::ffi::route::trace_forward(#name_str, #ncid);
                }
                return crate::ffi::route::real_call!(#name(#(#names),*): (#(#types),*)).unwrap_or_else(|missing| missing);
            }
        }
    } else {
        quote! {}
    };

    let body = &func.block;
    let new_body = match &opts.trace {
        Some(args) => quote! {{
            #route
            crate::ffi::call(
                #name_str,
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
            let on_panic = match panic_value(&name_str, &func.sig.output, opts.on_panic.as_ref()) {
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
