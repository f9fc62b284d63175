# One image for every askbus service; the service is the argument:
#   docker build -t askbus . && docker run askbus router
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY . .
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
 && mkdir -p /data && chown node:node /data
USER node
ENV ASKBUS_DATA_DIR=/data
ENTRYPOINT ["/app/deploy/docker-entrypoint.sh"]
CMD ["gateway"]
