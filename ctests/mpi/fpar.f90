! nf90_create_par / nf90_open_par through Debian's netcdf-fortran and our parallel library.
program fpar
  use mpi
  use netcdf
  implicit none
  integer :: ierr, rank, nranks, ncid, dimid, varid, st, i, failed
  integer, allocatable :: all(:)
  character(len=4096) :: path
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, path)
  failed = 0
  st = nf90_create_par(trim(path), ior(NF90_NETCDF4, NF90_CLOBBER), MPI_COMM_WORLD, MPI_INFO_NULL, ncid)
  call check(st, "create_par")
  call check(nf90_def_dim(ncid, "d", 3 * nranks, dimid), "def_dim")
  call check(nf90_def_var(ncid, "v", NF90_INT, (/ dimid /), varid), "def_var")
  call check(nf90_enddef(ncid), "enddef")
  call check(nf90_var_par_access(ncid, varid, NF90_COLLECTIVE), "par_access")
  call check(nf90_put_var(ncid, varid, (/ (rank * 3 + i, i = 0, 2) /), start=(/ rank * 3 + 1 /)), "put")
  call check(nf90_close(ncid), "close")
  call check(nf90_open_par(trim(path), NF90_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, ncid), "open_par")
  allocate(all(3 * nranks))
  call check(nf90_get_var(ncid, varid, all), "get")
  do i = 1, 3 * nranks
    if (all(i) /= i - 1) failed = failed + 1
  end do
  call check(nf90_close(ncid), "close")
  call MPI_Allreduce(MPI_IN_PLACE, failed, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', "fortran parallel (", nranks, " ranks): ", failed, " failed"
  call MPI_Finalize(ierr)
  if (failed /= 0) stop 1
contains
  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= NF90_NOERR) then
      print *, what, ": ", trim(nf90_strerror(status))
      failed = failed + 1
    end if
  end subroutine
end program
