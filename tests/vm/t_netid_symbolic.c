/*
 * t_netid_symbolic.c - make a copy of a shared library whose own calls
 * bind to itself, as a library linked with -Bsymbolic-functions does:
 * set DF_SYMBOLIC in its DT_FLAGS (glibc then searches the object itself
 * first for every reference it makes).  t_netid.sh runs the netid tests
 * against such a copy of libtirpc: librpcrdma's start-up check must say
 * that libtirpc's internal routes are out of reach, and every entry point
 * of rpcrdma_netid(3) must still work.
 *
 * usage: t_netid_symbolic SRC DST    exit 0, or 77 if SRC has no DT_FLAGS
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long file_size(FILE *f)
{
	long n;

	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		return -1;
	return n;
}

static unsigned char *slurp(const char *path, long *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;

	if (!f)
		return NULL;
	*len = file_size(f);
	if (*len > (long)sizeof(Elf64_Ehdr))
		buf = malloc(*len);
	if (buf && fread(buf, 1, *len, f) != (size_t)*len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The DT_FLAGS entry of a 64-bit ELF image, or NULL. */
static Elf64_Dyn *dt_flags(unsigned char *img, long len)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff + (unsigned long)eh->e_phnum * sizeof(*ph) >
		    (unsigned long)len)
		return NULL;
	ph = (Elf64_Phdr *)(img + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++, ph++) {
		Elf64_Dyn *d = (Elf64_Dyn *)(img + ph->p_offset);
		Elf64_Dyn *end =
			(Elf64_Dyn *)(img + ph->p_offset + ph->p_filesz);

		if (ph->p_type != PT_DYNAMIC ||
		    ph->p_offset + ph->p_filesz > (unsigned long)len)
			continue;
		for (; d < end && d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_FLAGS)
				return d;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned char *img;
	Elf64_Dyn *flags;
	FILE *out;
	long len;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SRC DST\n", argv[0]);
		return 2;
	}
	img = slurp(argv[1], &len);
	if (!img) {
		perror(argv[1]);
		return 1;
	}
	flags = dt_flags(img, len);
	if (!flags) {
		fprintf(stderr, "%s: no DT_FLAGS entry\n", argv[1]);
		return 77;
	}
	flags->d_un.d_val |= DF_SYMBOLIC;
	out = fopen(argv[2], "wb");
	if (!out || fwrite(img, 1, len, out) != (size_t)len || fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	free(img);
	return 0;
}
