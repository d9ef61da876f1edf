! netcdf-fortran (Debian's libnetcdff) writes and reads an NCZarr dataset through our library.
program f90_roundtrip
  use netcdf
  implicit none
  character(len=4096) :: dir, url
  integer :: ncid, x, t, v, s, i, status
  integer :: data(6), back(6)
  real :: temps(6, 2), tback(6, 2)
  character(len=32) :: title
  integer :: nrec

  call get_command_argument(1, dir)
  url = 'file://' // trim(dir) // '/f.file#mode=nczarr,file'
  data = (/ (i * 11, i = 1, 6) /)
  call check(nf90_create(trim(url), NF90_NETCDF4, ncid))
  call check(nf90_def_dim(ncid, 'x', 6, x))
  call check(nf90_def_dim(ncid, 'time', NF90_UNLIMITED, t))
  call check(nf90_def_var(ncid, 'counts', NF90_INT, (/ x /), v))
  call check(nf90_def_var(ncid, 'temp', NF90_REAL, (/ x, t /), s))
  call check(nf90_def_var_deflate(ncid, s, 1, 1, 4))
  call check(nf90_put_att(ncid, NF90_GLOBAL, 'title', 'fortran test'))
  call check(nf90_put_att(ncid, s, 'units', 'K'))
  call check(nf90_enddef(ncid))
  call check(nf90_put_var(ncid, v, data))
  temps = reshape((/ (real(i) / 4.0, i = 1, 12) /), (/ 6, 2 /))
  call check(nf90_put_var(ncid, s, temps))
  call check(nf90_close(ncid))

  call check(nf90_open(trim(url), NF90_NOWRITE, ncid))
  call check(nf90_inq_varid(ncid, 'counts', v))
  call check(nf90_get_var(ncid, v, back))
  call check(nf90_inq_varid(ncid, 'temp', s))
  call check(nf90_get_var(ncid, s, tback))
  call check(nf90_get_att(ncid, NF90_GLOBAL, 'title', title))
  call check(nf90_inquire_dimension(ncid, t, len=nrec))
  call check(nf90_close(ncid))
  if (any(back /= data) .or. any(tback /= temps) .or. trim(title) /= 'fortran test' .or. nrec /= 2) then
    print *, 'fortran: 0 passed, 1 failed'
    stop 1
  end if
  status = nf90_open('file:///nonexistent/x#mode=nczarr,file', NF90_NOWRITE, ncid)
  if (status /= -141) then
    print *, 'fortran: expected NC_ENOOBJECT, got', status
    stop 1
  end if
  print '(a)', 'fortran: 1 passed, 0 failed'
contains
  subroutine check(status)
    integer, intent(in) :: status
    if (status /= nf90_noerr) then
      print *, trim(nf90_strerror(status))
      stop 2
    end if
  end subroutine check
end program f90_roundtrip
