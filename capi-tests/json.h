/* The C harness's small file helpers: a JSON reader, enough for the fixtures' manifests
 * (objects, arrays, strings without escapes beyond \" \\ \/ \n \t, numbers, true/false/null),
 * reading a whole file, and a monotonic clock. Shared by fixture.h (NR's replay fixtures) and
 * rr_fixture.h (RR's); each program defines `g_program` (its name, used in messages) first. */
#ifndef OPENNGX_CAPI_JSON_H
#define OPENNGX_CAPI_JSON_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------ */
/* A small JSON reader: enough for the fixture manifest (objects, arrays, strings without
 * escapes beyond \" and \\, numbers, true/false/null). */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;

typedef struct Json {
    JType type;
    double num;
    char *str;           /* J_STR; also the key when the value sits in an object */
    char *key;
    struct Json *child;  /* first element / member */
    struct Json *next;   /* sibling */
} Json;

typedef struct {
    const char *p;
    int error;
} JParser;

static inline void j_ws(JParser *jp) {
    while (*jp->p && isspace((unsigned char)*jp->p)) jp->p++;
}

static inline Json *j_new(JType t) {
    Json *j = (Json *)calloc(1, sizeof(Json));
    if (j) j->type = t;
    return j;
}

static inline char *j_string(JParser *jp) {
    size_t cap = 32, n = 0;
    char *s;
    if (*jp->p != '"') {
        jp->error = 1;
        return NULL;
    }
    jp->p++;
    s = (char *)malloc(cap);
    if (!s) {
        jp->error = 1;
        return NULL;
    }
    while (*jp->p && *jp->p != '"') {
        char c = *jp->p++;
        if (c == '\\') {
            c = *jp->p++;
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c != '"' && c != '\\' && c != '/') {
                jp->error = 1;
                break;
            }
        }
        if (n + 1 >= cap) {
            char *t = (char *)realloc(s, cap *= 2);
            if (!t) {
                jp->error = 1;
                break;
            }
            s = t;
        }
        s[n++] = c;
    }
    s[n] = 0;
    if (*jp->p != '"') jp->error = 1;
    else jp->p++;
    return s;
}

static inline Json *j_value(JParser *jp, int depth);

static inline Json *j_list(JParser *jp, int depth, JType type, char close) {
    Json *j = j_new(type), *last = NULL;
    if (!j) {
        jp->error = 1;
        return NULL;
    }
    jp->p++;
    j_ws(jp);
    if (*jp->p == close) {
        jp->p++;
        return j;
    }
    while (!jp->error) {
        char *key = NULL;
        Json *v;
        j_ws(jp);
        if (type == J_OBJ) {
            key = j_string(jp);
            j_ws(jp);
            if (*jp->p != ':') {
                jp->error = 1;
                free(key);
                break;
            }
            jp->p++;
        }
        v = j_value(jp, depth + 1);
        if (!v) {
            free(key);
            break;
        }
        v->key = key;
        if (last) last->next = v;
        else j->child = v;
        last = v;
        j_ws(jp);
        if (*jp->p == ',') {
            jp->p++;
            continue;
        }
        if (*jp->p == close) {
            jp->p++;
            break;
        }
        jp->error = 1;
    }
    return j;
}

static inline Json *j_value(JParser *jp, int depth) {
    Json *j;
    j_ws(jp);
    if (depth > 32) {
        jp->error = 1;
        return NULL;
    }
    switch (*jp->p) {
        case '{': return j_list(jp, depth, J_OBJ, '}');
        case '[': return j_list(jp, depth, J_ARR, ']');
        case '"':
            j = j_new(J_STR);
            if (j) j->str = j_string(jp);
            return j;
        case 't':
        case 'f':
            j = j_new(J_BOOL);
            if (!j) return NULL;
            if (strncmp(jp->p, "true", 4) == 0) {
                j->num = 1;
                jp->p += 4;
            } else if (strncmp(jp->p, "false", 5) == 0) {
                jp->p += 5;
            } else {
                jp->error = 1;
            }
            return j;
        case 'n':
            if (strncmp(jp->p, "null", 4) != 0) jp->error = 1;
            else jp->p += 4;
            return j_new(J_NULL);
        default: {
            char *end;
            j = j_new(J_NUM);
            if (!j) return NULL;
            j->num = strtod(jp->p, &end);
            if (end == jp->p) jp->error = 1;
            jp->p = end;
            return j;
        }
    }
}

static inline void j_free(Json *j) {
    while (j) {
        Json *n = j->next;
        j_free(j->child);
        free(j->str);
        free(j->key);
        free(j);
        j = n;
    }
}

static inline const Json *j_get(const Json *obj, const char *key) {
    const Json *c;
    if (!obj || obj->type != J_OBJ) return NULL;
    for (c = obj->child; c; c = c->next) {
        if (c->key && strcmp(c->key, key) == 0) return c;
    }
    return NULL;
}

static inline const Json *j_at(const Json *arr, int i) {
    const Json *c;
    if (!arr || arr->type != J_ARR) return NULL;
    for (c = arr->child; c && i > 0; c = c->next) i--;
    return c;
}

static inline double j_num(const Json *j, double fallback) {
    return (j && (j->type == J_NUM || j->type == J_BOOL)) ? j->num : fallback;
}

static inline const char *j_str(const Json *j) {
    return (j && j->type == J_STR) ? j->str : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Files */

static inline void *read_file(const char *dir, const char *name, size_t *len) {
    char path[4096];
    FILE *f;
    long n;
    void *buf;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s\n", g_program, path);
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        ((char *)buf)[n] = 0;
        *len = (size_t)n;
    }
    return buf;
}

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
