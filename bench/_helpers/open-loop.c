// The open-loop HTTP/1.1 load generator of _helpers/open-loop.ts, in C: request i is due at
// start + i / rate whatever the server does, and its latency counts from then. Written in C
// because the load generator shares the machine's two cores with the server: the same loop in
// Node, on a 1-ms timer, cost 16-18 us of CPU per request at 2.5x capacity (11-12 here) and sent
// each millisecond's requests in one bunch, which a population of clients does not
// (bench/README.md, step 39).
//
//   open-loop <host-ipv4> <port> <rate> <seconds> <timeout-ms> <max-connections> <requests> <out>
//
// <requests>: u32 count, then per request u32 length, i32 offset of its 36-character event id
// (or -1), and its bytes (a whole HTTP request). Request i sends template i % count with the event
// id replaced by one unique to this run and request, so that no event is a replay of another.
// <out>: i32 total; f64 due ms[total]; f64 latency ms[total]; i16 status[total]; u8 refused in
// the envelope[total]; i32 connections opened; f64 CPU us per request; i32 stalls; f64 pairs
// (ms after the start, length ms) of the generator's own stalls over 10 ms. Statuses as in
// open-loop.ts: 0 timed out after sending, -1 never sent, -2 connection error.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { kTimedOut = 0, kNeverSent = -1, kConnectionError = -2 };
enum { kStallMs = 10, kSweepMs = 10, kMaxWaitMs = 5, kIdLength = 36 };

typedef struct {
  uint32_t length;
  int32_t id_offset;
  const char *bytes;
} Template;

typedef struct {
  int fd; /* -1: free slot */
  int connected;
  long current; /* request in flight, or -1 */
  char *out;
  size_t out_length, out_sent;
  char *in;
  size_t in_length, in_capacity;
} Connection;

static double now_ms(const struct timespec *start) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - start->tv_sec) * 1e3 + (double)(t.tv_nsec - start->tv_nsec) / 1e6;
}

static void die(const char *what) {
  perror(what);
  exit(2);
}

static char *read_file(const char *path, size_t *length) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) die(path);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *data = malloc((size_t)size);
  if (data == NULL || fread(data, 1, (size_t)size, file) != (size_t)size) die("read requests");
  fclose(file);
  *length = (size_t)size;
  return data;
}

/* Case-insensitive search for a header name at a line start within the head; returns its value. */
static const char *header_value(const char *head, size_t head_length, const char *name) {
  size_t name_length = strlen(name);
  for (size_t i = 0; i + 2 + name_length < head_length; i++) {
    if (head[i] != '\r' || head[i + 1] != '\n') continue;
    if (strncasecmp(head + i + 2, name, name_length) != 0) continue;
    const char *value = head + i + 2 + name_length;
    while (*value == ' ') value++;
    return value;
  }
  return NULL;
}

/* The failure envelope { "status": 0, "data": null, "errors": [ {...} ] } with Retry-After. */
static int is_failure_envelope(const char *head, size_t head_length, const char *body, size_t body_length) {
  if (header_value(head, head_length, "retry-after:") == NULL) return 0;
  return memmem(body, body_length, "\"status\":0", 10) != NULL && memmem(body, body_length, "\"data\":null", 11) != NULL &&
         memmem(body, body_length, "\"errors\":[{", 11) != NULL;
}

/* The run's state: one run per process. */
static struct sockaddr_in address = {.sin_family = AF_INET};
static double rate, timeout_ms;
static int max_connections;
static long total;
static Template *templates;
static uint32_t count;
static uint32_t nonce[2];
static double *due, *latency;
static int16_t *status;
static uint8_t *enveloped;
static Connection *connections;
static int slots;
static int *idle;
static int idle_count, busy, opened;
static int epoll_fd;
static struct timespec start;
static long finished;

static void finish(long index, int code) {
  latency[index] = now_ms(&start) - due[index];
  status[index] = (int16_t)code;
  finished++;
}

/* Ends a connection's request: keep it for the next one, or close it. */
static void release(Connection *c, int keep) {
  c->current = -1;
  c->in_length = 0;
  busy--;
  if (keep) {
    idle[idle_count++] = (int)(c - connections);
    return;
  }
  close(c->fd);
  c->fd = -1;
}

/* A connection that closed or failed: its request, if any, failed with it. */
static void lost(Connection *c) {
  if (c->current >= 0) {
    finish(c->current, kConnectionError);
    busy--;
  } else {
    for (int i = 0; i < idle_count; i++) {
      if (idle[i] == (int)(c - connections)) {
        idle[i] = idle[--idle_count];
        break;
      }
    }
  }
  c->current = -1;
  close(c->fd);
  c->fd = -1;
}

static void flush_out(Connection *c) {
  while (c->out_sent < c->out_length) {
    ssize_t n = send(c->fd, c->out + c->out_sent, c->out_length - c->out_sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN) return;
      lost(c);
      return;
    }
    c->out_sent += (size_t)n;
  }
}

/* Whether the connection's answer is complete; if so, its request is finished. */
static void take_answer(Connection *c, int closing) {
  char *head_end = memmem(c->in, c->in_length, "\r\n\r\n", 4);
  if (head_end == NULL) return;
  size_t head_length = (size_t)(head_end - c->in);
  const char *length_value = header_value(c->in, head_length, "content-length:");
  size_t body_length = length_value == NULL ? 0 : strtoul(length_value, NULL, 10);
  if (c->in_length < head_length + 4 + body_length) return;
  long index = c->current;
  /* An answer past the deadline that the sweep has not caught yet: the client had gone. */
  int code = now_ms(&start) - due[index] >= timeout_ms ? kTimedOut : atoi(c->in + 9);
  if (code != kTimedOut && (code < 200 || code > 299)) enveloped[index] = (uint8_t)is_failure_envelope(c->in, head_length, head_end + 4, body_length);
  finish(index, code);
  const char *connection_header = header_value(c->in, head_length, "connection:");
  release(c, !closing && (connection_header == NULL || strncasecmp(connection_header, "close", 5) != 0));
}

static void on_readable(Connection *c) {
  int closing = 0;
  for (;;) {
    if (c->in_capacity - c->in_length < 4096) {
      c->in_capacity = c->in_capacity == 0 ? 16384 : c->in_capacity * 2;
      c->in = realloc(c->in, c->in_capacity);
    }
    ssize_t n = recv(c->fd, c->in + c->in_length, c->in_capacity - c->in_length, 0);
    if (n > 0) {
      c->in_length += (size_t)n;
      continue;
    }
    closing = n == 0 || errno != EAGAIN;
    break;
  }
  if (c->current >= 0) take_answer(c, closing);
  else c->in_length = 0; /* bytes of an answer given up on */
  if (closing && c->fd >= 0) lost(c);
}

static void send_request(long index) {
  Connection *c;
  if (idle_count > 0) {
    c = &connections[idle[--idle_count]];
  } else {
    int slot = 0;
    while (connections[slot].fd >= 0) slot++;
    c = &connections[slot];
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0) die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->connected = 0;
    c->in_length = 0;
    opened++;
    if (connect(c->fd, (struct sockaddr *)&address, sizeof address) == 0) c->connected = 1;
    else if (errno != EINPROGRESS) die("connect");
    struct epoll_event event = {.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, .data.u32 = (uint32_t)slot};
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c->fd, &event) != 0) die("epoll_ctl");
  }
  const Template *t = &templates[index % count];
  if (c->out == NULL || c->out_length < t->length) c->out = realloc(c->out, t->length);
  memcpy(c->out, t->bytes, t->length);
  if (t->id_offset >= 0) {
    char id[kIdLength + 1];
    snprintf(id, sizeof id, "%08x-%04x-4000-8000-%012lx", nonce[0], nonce[1] & 0xffff, (unsigned long)index);
    memcpy(c->out + t->id_offset, id, kIdLength);
  }
  c->out_length = t->length;
  c->out_sent = 0;
  c->current = index;
  busy++;
  if (c->connected) flush_out(c);
}

int main(int argc, char **argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: open-loop host port rate seconds timeout-ms max-connections requests out\n");
    return 2;
  }
  address.sin_port = htons((uint16_t)atoi(argv[2]));
  if (inet_pton(AF_INET, argv[1], &address.sin_addr) != 1) die("host (an IPv4 address)");
  rate = atof(argv[3]);
  const double seconds = atof(argv[4]);
  timeout_ms = atof(argv[5]);
  max_connections = atoi(argv[6]);
  total = (long)(rate * seconds);

  size_t file_length;
  char *file = read_file(argv[7], &file_length);
  memcpy(&count, file, 4);
  templates = calloc(count, sizeof(Template));
  size_t at = 4;
  for (uint32_t i = 0; i < count; i++) {
    memcpy(&templates[i].length, file + at, 4);
    memcpy(&templates[i].id_offset, file + at + 4, 4);
    templates[i].bytes = file + at + 8;
    at += 8 + templates[i].length;
  }

  /* Event ids: a random prefix for the run, then the request's number. */
  int random_fd = open("/dev/urandom", O_RDONLY);
  if (random_fd < 0 || read(random_fd, nonce, sizeof nonce) != sizeof nonce) die("/dev/urandom");
  close(random_fd);

  due = calloc((size_t)total + 1, sizeof(double));
  latency = calloc((size_t)total + 1, sizeof(double));
  status = calloc((size_t)total + 1, sizeof(int16_t));
  enveloped = calloc((size_t)total + 1, 1);
  double *stalls = NULL;
  int stall_count = 0, stall_capacity = 0;

  /* Slots for connections: at most max_connections busy, and closed ones are reused. */
  slots = max_connections + 16;
  connections = calloc((size_t)slots, sizeof(Connection));
  idle = malloc(sizeof(int) * (size_t)slots);
  for (int i = 0; i < slots; i++) connections[i].fd = -1;

  epoll_fd = epoll_create1(0);
  if (epoll_fd < 0) die("epoll_create1");
  struct epoll_event events[256];

  clock_gettime(CLOCK_MONOTONIC, &start);
  struct rusage usage_before;
  getrusage(RUSAGE_SELF, &usage_before);

  long scheduled = 0, queue_head = 0;
  double last_sweep = 0, last_tick = 0;

  while (finished < total) {
    double now = now_ms(&start);
    if (now - last_tick > kStallMs) {
      if (stall_count == stall_capacity) {
        stall_capacity = stall_capacity == 0 ? 64 : stall_capacity * 2;
        stalls = realloc(stalls, sizeof(double) * 2 * (size_t)stall_capacity);
      }
      stalls[2 * stall_count] = last_tick;
      stalls[2 * stall_count + 1] = now - last_tick;
      stall_count++;
    }
    last_tick = now;
    long now_due = (long)(now / 1000 * rate);
    if (now_due > total) now_due = total;
    for (; scheduled < now_due; scheduled++) due[scheduled] = (double)scheduled * 1000 / rate;
    /* Hang up on requests past their deadline (a deadline is seconds; every 10 ms is enough). */
    if (now - last_sweep >= kSweepMs) {
      last_sweep = now;
      for (int i = 0; i < slots; i++) {
        Connection *c = &connections[i];
        if (c->fd < 0 || c->current < 0 || now - due[c->current] < timeout_ms) continue;
        finish(c->current, kTimedOut);
        release(c, 0);
      }
    }
    for (; queue_head < scheduled; queue_head++) {
      if (now - due[queue_head] >= timeout_ms) finish(queue_head, kNeverSent);
      else if (idle_count > 0 || busy < max_connections) send_request(queue_head);
      else break;
    }
    if (finished >= total) break;
    /* Sleep until the next request is due (at least 0.1 ms: requests go out in small bunches). */
    double wait_ms = scheduled < total ? (double)scheduled * 1000 / rate - now_ms(&start) : kMaxWaitMs;
    if (wait_ms < 0.1) wait_ms = 0.1;
    if (wait_ms > kMaxWaitMs) wait_ms = kMaxWaitMs;
    struct timespec timeout = {.tv_sec = 0, .tv_nsec = (long)(wait_ms * 1e6)};
    int ready = epoll_pwait2(epoll_fd, events, 256, &timeout, NULL);
    if (ready < 0 && errno != EINTR) die("epoll_pwait2");
    for (int i = 0; i < ready; i++) {
      Connection *c = &connections[events[i].data.u32];
      if (c->fd < 0) continue;
      uint32_t flags = events[i].events;
      if (!c->connected && (flags & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) {
          lost(c);
          continue;
        }
        c->connected = 1;
      }
      if (c->connected && (flags & EPOLLOUT) && c->current >= 0) flush_out(c);
      if (c->fd >= 0 && (flags & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) on_readable(c);
    }
  }

  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  double cpu_us = (double)(usage.ru_utime.tv_sec - usage_before.ru_utime.tv_sec + usage.ru_stime.tv_sec - usage_before.ru_stime.tv_sec) * 1e6 +
                  (double)(usage.ru_utime.tv_usec - usage_before.ru_utime.tv_usec + usage.ru_stime.tv_usec - usage_before.ru_stime.tv_usec);
  for (int i = 0; i < slots; i++)
    if (connections[i].fd >= 0) close(connections[i].fd);

  FILE *out = fopen(argv[8], "wb");
  if (out == NULL) die(argv[8]);
  int32_t total32 = (int32_t)total;
  double cpu_per_request = cpu_us / (double)(total > 0 ? total : 1);
  int32_t opened32 = opened, stalls32 = stall_count;
  fwrite(&total32, 4, 1, out);
  fwrite(due, sizeof(double), (size_t)total, out);
  fwrite(latency, sizeof(double), (size_t)total, out);
  fwrite(status, sizeof(int16_t), (size_t)total, out);
  fwrite(enveloped, 1, (size_t)total, out);
  fwrite(&opened32, 4, 1, out);
  fwrite(&cpu_per_request, sizeof(double), 1, out);
  fwrite(&stalls32, 4, 1, out);
  if (stall_count > 0) fwrite(stalls, sizeof(double), 2 * (size_t)stall_count, out);
  if (fclose(out) != 0) die(argv[8]);
  return 0;
}
