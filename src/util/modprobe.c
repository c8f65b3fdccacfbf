#include "util/modprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

void util_modprobe(const char *module)
{
	fflush(NULL); /* the child must not write our buffered output again */
	pid_t pid = fork();
	if (pid == 0) {
		int nfd = open("/dev/null", O_RDWR);
		if (nfd >= 0) {
			dup2(nfd, 1);
			dup2(nfd, 2);
		}
		execlp("modprobe", "modprobe", "-q", module, (char *)NULL);
		_exit(127);
	}
	int st;
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
}
