/* Linked only into libnczarr_preload.so: switches the ncid numbering to the top-down slots
 * that stay clear of the real netcdf-c's (spec/passthrough.md section 5.2). */
extern void nczarr_use_passthrough_numbering(void);

__attribute__((constructor)) static void nczarr_preload_init(void)
{
    nczarr_use_passthrough_numbering();
}
