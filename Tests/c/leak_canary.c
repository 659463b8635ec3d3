/* Leaks on purpose: the leak check must flag this program, which proves that
 * it would flag a leak in the quickstart too. */
#include <stdlib.h>
#include <stdio.h>

int main(void)
{
    void *volatile p = malloc(4096);
    p = NULL;
    printf("leaked 4096 bytes\n");
    return 0;
}
